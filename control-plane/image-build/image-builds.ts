/**
 * Building and pulling images through the engine API, following the JSON
 * progress stream: `stream`/`status` lines go to the log, an `error` entry
 * (the engine reports build failures inside a 200 response) becomes
 * ERR_IMAGE_BUILD with the engine's message.
 */
import { Readable } from 'node:stream';
import type Dockerode from 'dockerode';
import { McphostError } from '../errors.js';

/** Options of one image build. */
export interface BuildImageOptions {
  /** Tag the built image receives. */
  tag: string;
  /** Dockerfile path inside the context; default `Dockerfile`. */
  dockerfile?: string;
  /** Build arguments (`ARG`). */
  buildArgs?: Record<string, string>;
  /** Labels stamped on the image. */
  labels?: Record<string, string>;
  /** Receives build output line by line; default: dropped. */
  log?: (line: string) => void;
  /** Gives up after this many milliseconds; default 600 000. */
  timeoutMs?: number;
}

/** Builds `context` (a tar archive) into `options.tag`; rejects with ERR_IMAGE_BUILD on any failure. */
export async function buildImage(
  docker: Dockerode,
  context: Buffer,
  options: BuildImageOptions,
): Promise<void> {
  const abort = new AbortController();
  const timeoutMs = options.timeoutMs ?? 600_000;
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const stream = await docker.buildImage(Readable.from([context]), {
      t: options.tag,
      dockerfile: options.dockerfile,
      buildargs: options.buildArgs,
      labels: options.labels,
      rm: true,
      forcerm: true,
      abortSignal: abort.signal,
    });
    await followProgress(stream, options.log ?? (() => {}));
  } catch (error) {
    if (error instanceof McphostError) throw error;
    const reason = abort.signal.aborted ? `timed out after ${timeoutMs} ms` : messageOf(error);
    throw new McphostError('ERR_IMAGE_BUILD', `building image ${options.tag} failed: ${reason}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Options of one pull. */
export interface PullImageOptions {
  /** Gives up after this many milliseconds; default 15 000. */
  timeoutMs?: number;
  /** Receives progress lines; default: dropped. */
  log?: (line: string) => void;
}

/** Pulls `name` from its registry; rejects with ERR_IMAGE_BUILD when it fails or times out. */
export async function pullImage(
  docker: Dockerode,
  name: string,
  options: PullImageOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const stream = (await docker.pull(name, {
      abortSignal: abort.signal,
    })) as NodeJS.ReadableStream;
    await followProgress(stream, options.log ?? (() => {}), abort.signal);
  } catch (error) {
    const reason = abort.signal.aborted ? `timed out after ${timeoutMs} ms` : messageOf(error);
    throw new McphostError('ERR_IMAGE_BUILD', `pulling ${name} failed: ${reason}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
}

/** True when the engine holds an image called `name`. */
export async function imageExists(docker: Dockerode, name: string): Promise<boolean> {
  try {
    await docker.getImage(name).inspect();
    return true;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw new McphostError(
      'ERR_SANDBOX_UNAVAILABLE',
      `Docker engine did not answer: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
}

interface ProgressEntry {
  stream?: string;
  status?: string;
  progress?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** Reads the newline-delimited JSON progress stream until it ends; throws at its first error entry. */
async function followProgress(
  stream: NodeJS.ReadableStream,
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  let pending = '';
  let failure: string | undefined;
  const onAbort = (): void => {
    (stream as Readable).destroy?.(new Error('aborted'));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer | string>) {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) failure ??= handleLine(line, log);
    }
    failure ??= handleLine(pending, log);
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (failure !== undefined) throw new McphostError('ERR_IMAGE_BUILD', failure);
}

/** Logs one progress line; returns the error message it carries, if any. */
function handleLine(line: string, log: (line: string) => void): string | undefined {
  if (line.trim() === '') return undefined;
  let entry: ProgressEntry;
  try {
    entry = JSON.parse(line) as ProgressEntry;
  } catch {
    log(line.trim());
    return undefined;
  }
  if (entry.error !== undefined || entry.errorDetail !== undefined) {
    return (entry.errorDetail?.message ?? entry.error ?? 'unknown build error').trim();
  }
  const text =
    entry.stream ??
    (entry.status === undefined ? undefined : `${entry.status} ${entry.progress ?? ''}`);
  for (const part of (text ?? '').split('\n')) if (part.trim() !== '') log(part.trimEnd());
  return undefined;
}

/** The message of an unknown thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
