/**
 * One running runner container as a SandboxInstance: stdin writes go down the
 * hijacked attach socket, stdout/stderr come back demultiplexed, and `exited`
 * settles after the engine's wait, an inspect (exit code, OOM) and removal.
 * With a RunnerSocket (the local data path), the protocol travels over the
 * socket the harness connects to instead, and the attach stream carries
 * stderr only; the socket's directory goes with the container.
 */
import { constants } from 'node:os';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SandboxExit, SandboxInstance } from '../driver.js';
import type { ContainerClient } from './container-client.js';
import { looksLikeHeapExhaustion } from '../faults.js';
import { StderrTail } from '../stderr-tail.js';
import type { RunnerSocket } from './runner-socket.js';
import { StreamDemuxer } from './stream-demuxer.js';
import { StdoutFanout } from '../stdout-fanout.js';

/** What a DockerInstance needs besides its container. */
export interface DockerInstanceSettings {
  /** How long `kill()` waits for the exit before forcing removal, in ms. */
  killTimeoutMs: number;
  /** Bytes of stderr kept for `SandboxExit.stderrTail`. */
  stderrTailBytes: number;
}

// After the engine reports the exit, the attach stream may still carry the
// last stderr bytes; wait this long (ms) for it to end before reporting.
const STREAM_DRAIN_MS = 500;

/** A started, attached container. Construct only through DockerSandbox.start. */
export class DockerInstance implements SandboxInstance {
  readonly id: string;
  readonly exited: Promise<SandboxExit>;
  readonly #client: ContainerClient;
  readonly #socket: Duplex;
  readonly #settings: DockerInstanceSettings;
  readonly #stderr: StderrTail;
  readonly #socketClosed: Promise<void>;
  readonly #stdout = new StdoutFanout();
  /** The local data path, when the container has one. */
  readonly #runnerSocket: RunnerSocket | undefined;
  /** The harness's connection on it, once made. */
  #channel: Socket | undefined;
  readonly #channelClosed: Promise<void>;
  #killing: Promise<void> | undefined;
  #gone = false;

  constructor(
    id: string,
    socket: Duplex,
    client: ContainerClient,
    settings: DockerInstanceSettings,
    runnerSocket?: RunnerSocket,
  ) {
    this.id = id;
    this.#client = client;
    this.#socket = socket;
    this.#settings = settings;
    this.#runnerSocket = runnerSocket;
    this.#stderr = new StderrTail(settings.stderrTailBytes);
    const demuxer = new StreamDemuxer((stream, payload) => {
      // With a socket, stdout carries no protocol: whatever comes there is a diagnostic.
      if (stream === 'stderr' || runnerSocket !== undefined) this.#stderr.push(payload);
      else this.#stdout.emit(payload, true);
    });
    this.#channelClosed =
      runnerSocket === undefined
        ? Promise.resolve()
        : runnerSocket.connection.then(
            (channel) =>
              new Promise<void>((resolve) => {
                this.#channel = channel;
                channel.on('data', (chunk: Buffer) => this.#stdout.emit(chunk, true));
                // A broken channel shows up as the container's exit, like the attach stream.
                channel.on('error', () => {});
                channel.once('close', () => resolve());
              }),
            () => undefined,
          );
    socket.on('data', (chunk: Buffer) => demuxer.push(chunk));
    this.#socketClosed = new Promise((resolve) => {
      socket.once('close', () => resolve());
      socket.once('end', () => resolve());
    });
    // A broken socket shows up as the container's exit; nothing to throw at.
    socket.on('error', () => {});
    this.exited = this.#watchExit();
  }

  write(data: string): void {
    // With a socket the harness's connection takes the input; it exists before
    // `ready` can arrive, and nothing is written before that.
    const input = this.#runnerSocket === undefined ? this.#socket : this.#channel;
    if (input === undefined && !this.#gone) {
      throw new Error(`container ${this.id.slice(0, 12)} has not connected to its socket yet`);
    }
    // Throwing (not dropping the line) lets the connection fail its invocation at
    // once instead of waiting out the tool's timeout for an answer that cannot come.
    if (this.#gone || input === undefined || input.destroyed || !input.writable) {
      throw new Error(`container ${this.id.slice(0, 12)} no longer takes input`);
    }
    input.write(data);
  }

  onStdout(listener: (chunk: Buffer) => void): void {
    this.#stdout.listen(listener);
  }

  kill(): Promise<void> {
    this.#killing ??= this.#killOnce();
    return this.#killing;
  }

  async #killOnce(): Promise<void> {
    if (this.#gone) return;
    await this.#client.kill(this.id).catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      this.exited.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), this.#settings.killTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) await this.#client.remove(this.id).catch(() => {});
  }

  async #watchExit(): Promise<SandboxExit> {
    const waited = await this.#client.wait(this.id).catch(() => null);
    // A harness that never connected never will: nothing to drain from the socket.
    if (this.#channel === undefined) await this.#runnerSocket?.close().catch(() => {});
    await Promise.race([
      Promise.all([this.#socketClosed, this.#channelClosed]),
      delay(STREAM_DRAIN_MS),
    ]);
    this.#gone = true;
    this.#socket.destroy();
    await this.#runnerSocket?.close().catch(() => {});
    const end = await this.#client.inspectEnd(this.id).catch(() => undefined);
    await this.#client.remove(this.id).catch(() => {});
    const exitCode = end?.exitCode ?? waited;
    const stderrTail = this.#stderr.text();
    return {
      exitCode,
      signal: signalOfExitCode(exitCode),
      oomKilled: end?.oomKilled === true || looksLikeHeapExhaustion(stderrTail),
      stderrTail,
    };
  }
}

/** Docker reports death by signal N as exit code 128 + N. */
function signalOfExitCode(exitCode: number | null): string | undefined {
  if (exitCode === null || exitCode <= 128 || exitCode > 128 + 64) return undefined;
  const number = exitCode - 128;
  return Object.entries(constants.signals).find(([, value]) => value === number)?.[0];
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
