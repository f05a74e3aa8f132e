/**
 * The messages between the control plane's thread (schema-check-lane.ts) and a
 * schema-check worker thread (schema-check-worker.ts). Both ends are this
 * repository's code in one process: the shapes are types, not parsed.
 */
import type { SchemaCheck, SchemaSubject } from './tool-schemas.js';

/** One value to check against one schema; the worker answers requests one at a time, in order. */
export interface SchemaCheckRequest {
  readonly id: number;
  readonly subject: SchemaSubject;
  readonly value: unknown;
}

/**
 * From the worker: it has loaded and takes requests, or one request's
 * verdict with the worker's time on it in ms (compiling included): what the
 * request's server is charged (schema-check-usage.ts), measured where it is
 * spent, not on a control-plane thread that may be busy when the answer comes.
 */
export type SchemaCheckWorkerMessage =
  | { readonly kind: 'ready' }
  | {
      readonly kind: 'checked';
      readonly id: number;
      readonly check: SchemaCheck;
      readonly workerMs: number;
    };
