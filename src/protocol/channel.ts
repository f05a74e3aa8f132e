/**
 * How the harness learns that the protocol travels over a Unix socket rather
 * than stdin/stdout: `--channel=<socket path>` on its command line (see
 * control-plane/sandbox/docker/runner-socket.ts and runner-image/socket-channel.ts).
 * On the command line, not in the environment, like every other harness flag.
 */
export const CHANNEL_FLAG = '--channel=';
