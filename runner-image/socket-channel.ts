/**
 * The harness's end of the local data path (control-plane/sandbox/docker/runner-socket.ts):
 * with `--channel=<path>` on its command line, the harness connects to the
 * Unix socket the control plane listens on and speaks the protocol there
 * instead of on stdin/stdout; stderr stays the engine's. It connects once, at
 * boot, before any tool code runs.
 */
import { connect, type Socket } from 'node:net';
import { CHANNEL_FLAG } from '../src/protocol/index.js';

/** The socket path given on the command line, or undefined for stdio. */
export function channelPathOf(argv: readonly string[]): string | undefined {
  const flag = argv.find((argument) => argument.startsWith(CHANNEL_FLAG));
  return flag === undefined ? undefined : flag.slice(CHANNEL_FLAG.length);
}

/** Connects to the control plane's socket; rejects with the system's reason. */
export function connectChannel(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path, allowHalfOpen: false });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
  });
}
