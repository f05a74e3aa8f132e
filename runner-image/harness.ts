/**
 * The program inside every runner container. stdout carries the protocol only
 * (newline-delimited JSON); stderr carries diagnostics. It announces `ready`
 * first, then keeps one fresh context prepared and runs invocations one at a
 * time. A protocol fault exits with 70 (EX_SOFTWARE); the control plane retires
 * the container.
 */
import { LineReader, ControlMessage } from '../src/protocol/index.js';
import { readContextScripts } from './context-scripts.js';
import { InvocationRunner } from './invocation-runner.js';
import { readyLine } from './protocol-lines.js';
import { ToolContextFactory } from './tool-context.js';
import { channelPathOf, connectChannel } from './socket-channel.js';
import { ensureVmModulesFlag } from './vm-modules-flag.js';

const EXIT_PROTOCOL_FAULT = 70;
const EXIT_CONFIG = 78;
/** The socket of `--channel` could not be reached (EX_UNAVAILABLE): the data path is broken, not the harness. */
const EXIT_NO_CHANNEL = 69;

function diagnostic(text: string): void {
  process.stderr.write(`harness: ${text}\n`);
}

function main(): void {
  if (ensureVmModulesFlag() === 'relaunched') return;

  let contexts: ToolContextFactory;
  try {
    contexts = new ToolContextFactory(
      new URL('./lodash.min.js', import.meta.url),
      readContextScripts(new URL('./context-scripts.json', import.meta.url)),
    );
  } catch (error) {
    diagnostic(
      `cannot load lodash.min.js and context-scripts.json beside the harness: ${(error as Error).message}`,
    );
    process.exit(EXIT_CONFIG);
  }

  const channelPath = channelPathOf(process.argv);
  if (channelPath === undefined) {
    serve(contexts, process.stdin, (line) => void process.stdout.write(line));
    return;
  }
  // The local data path: the protocol travels over the control plane's socket.
  connectChannel(channelPath).then(
    (channel) => {
      // The control plane closed it mid-write (EPIPE): the end, as when it closes it cleanly.
      channel.on('error', () => process.exit(0));
      serve(contexts, channel, (line) => void channel.write(line));
    },
    (error: Error) => {
      diagnostic(`cannot connect to ${channelPath}: ${error.message}`);
      process.exit(EXIT_NO_CHANNEL);
    },
  );
}

/** Speaks the protocol on `input` and `write` until the input ends. */
function serve(
  contexts: ToolContextFactory,
  input: NodeJS.ReadableStream,
  write: (line: string) => void,
): void {
  const fault = (reason: string): never => {
    diagnostic(`protocol fault: ${reason}`);
    process.exit(EXIT_PROTOCOL_FAULT);
  };
  const runner = new InvocationRunner({ contexts, write, onFault: fault });

  // A tool's promise rejected with nobody listening must not take the harness down.
  process.on('unhandledRejection', () => undefined);
  // As PID 1 in its container the harness gets no default SIGTERM handling: without
  // this, stopping the engine waits its full grace period for every runner.
  process.on('SIGTERM', () => process.exit(0));

  const reader = new LineReader({
    schema: ControlMessage,
    onMessage: (message) => runner.handle(message),
    onFault: (error) => fault(error.message),
  });
  input.on('data', (chunk: Buffer) => reader.push(chunk));
  // The control plane went away (or closed this runner): nothing more can come.
  input.on('end', () => process.exit(0));
  input.on('close', () => process.exit(0));

  write(readyLine());
  runner.prepareSoon();
}

main();
