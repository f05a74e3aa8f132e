/**
 * A schema-check worker thread: compiles tool schemas and validates values
 * against them, one request at a time, so that neither ever runs on the
 * control plane's thread. It keeps no state worth saving: the control plane
 * (schema-check-lane.ts) times each request and, when one overruns, terminates
 * the thread and starts another, which compiles again on demand.
 */
import { parentPort } from 'node:worker_threads';
// The compiler alone, not the store's face (store/index.ts) nor its save-time
// checks: those load the database drivers and zod too, and a worker replaced
// after an overrun must be back at once (zod alone: 1.5 s more under tsx on a
// loaded machine, 100 ms more built, measured).
// eslint-disable-next-line no-restricted-imports
import { createToolSchemaCompiler } from '../store/tool-schema-compiler.js';
import type { SchemaCheckRequest, SchemaCheckWorkerMessage } from './schema-check-protocol.js';
import { ToolSchemaCache } from './tool-schemas.js';

/** Compiled validators kept at most; a typical one is 5–50 K characters of code. */
const SCHEMA_CACHE_ENTRIES = 1024;
/**
 * Generated code kept at most, in characters: 128 schemas at the largest
 * TOOL_SCHEMA_MAX_CODE_CHARACTERS allows, about 100 MB of the worker's heap.
 */
const SCHEMA_CACHE_GENERATED_CHARACTERS = 32 * 1024 * 1024;

const port = parentPort;
if (port === null) throw new Error('schema-check-worker.ts runs as a worker thread');

const schemas = new ToolSchemaCache({
  entries: SCHEMA_CACHE_ENTRIES,
  generatedCharacters: SCHEMA_CACHE_GENERATED_CHARACTERS,
  createCompiler: createToolSchemaCompiler,
});

port.on('message', (request: SchemaCheckRequest) => {
  const started = performance.now();
  const check = schemas.check(request.subject, request.value);
  const answer: SchemaCheckWorkerMessage = {
    kind: 'checked',
    id: request.id,
    check,
    workerMs: performance.now() - started,
  };
  port.postMessage(answer);
});
port.postMessage({ kind: 'ready' } satisfies SchemaCheckWorkerMessage);
