/**
 * The shapes the dashboard reads from the admin API. Where the control plane
 * has the type, it is imported as a type only (erased from the bundle, so no
 * server code reaches the browser); the rest mirror the API's answers.
 */
import type { ServerView } from '../../admin/server-view.js';
import type { BudgetStats, ServerPoolStats } from '../../sandbox/sandbox-manager.js';
import type { PoolStats } from '../../sandbox/pool/pool-contract.js';
import type { InvocationRecord } from '../../store/records.js';

/** A hosted server as `GET /api/servers` lists it (the control plane's own view). */
export interface ServerInfo extends ServerView {
  warnings?: string[];
}

/** One declared tool parameter. */
export interface ToolParameter {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';
  required: boolean;
  description?: string;
}

/** A tool definition as saved. */
export interface ToolDefinition {
  description: string;
  code: string;
  parameters: ToolParameter[];
  secrets: string[];
  limits: { timeoutMs?: number; memoryMb?: number };
  strict: boolean;
}

/** A saved tool. */
export interface ToolInfo extends ToolDefinition {
  name: string;
  version: number;
  updatedAt: string;
}

/** One saved version of a tool. */
export interface ToolVersion extends ToolDefinition {
  version: number;
  savedAt: string;
}

/** A secret as listed: never its value. */
export interface SecretInfo {
  name: string;
  updatedAt: string;
}

/** Result of a test run. */
export interface InvokeResult {
  ok: boolean;
  result?: unknown;
  error?: { code?: string; message?: string } | string;
  logs: { level: string; text: string }[];
  durationMs: number;
  version: number;
}

/** One pool's figures from `GET /api/pools` (the control plane's own type). */
export type PoolInfo = PoolStats;

/** `GET /api/pools`. */
export interface PoolsAnswer {
  budget: BudgetStats;
  servers: ServerPoolStats[];
  pools: PoolInfo[];
  /** Sizes an admin saved, by unit (`server` or `server/tool`). */
  sizes: { unit: string; minWarm: number; maxSize: number }[];
  defaults: { minWarm: number; maxSize: number; maxSizeCap: number };
}

/** One row of the invocation log (the store's record, as the API returns it). */
export type InvocationInfo = InvocationRecord;
