/**
 * The answers of the admin API that the routes build inline, with no type of
 * their own in the control plane to import: declared here from the control
 * plane's parts. Everything else the dashboard reads or sends (records,
 * views, statistics) it imports from the control plane itself. Every import
 * of control-plane code is `import type`: erased from the bundle, so no
 * server code reaches the browser.
 */
import type { ServerView } from '../../admin/index.js';
import type {
  BudgetStats,
  LogEntry,
  OutcomeError,
  PoolStats,
  ServerPoolStats,
} from '../../sandbox/index.js';
import type { PoolSizing, PromptMessage } from '../../store/index.js';
import type { ContentBlock } from '../../../src/protocol/index.js';

/** A hosted server as the API shows it; `PATCH` adds warnings about the saved settings. */
export type ServerInfo = ServerView & { warnings?: string[] };

/**
 * `POST /api/servers/{sub}/tools/{name}/invoke`: the tool's value (or the
 * MCP content blocks it built with `sdk.content`) or failure, its console and
 * the version that ran.
 */
export type TestRunAnswer = (
  | { ok: true; result?: unknown; content?: unknown[]; error?: undefined }
  | { ok: false; error: OutcomeError; result?: undefined; content?: undefined }
) & {
  logs: LogEntry[];
  /** Time spent running in a container, in ms. */
  durationMs: number;
  version: number;
};

/** `GET /api/pools`. */
export interface PoolsAnswer {
  budget: BudgetStats;
  servers: ServerPoolStats[];
  pools: PoolStats[];
  /** Sizes an admin saved, by unit (`server` or `server/tool`). */
  sizes: (PoolSizing & { unit: string })[];
  /** What a pool with no saved size gets (more fields are sent; these are the ones read). */
  defaults: PoolSizing & { maxSizeCap: number };
}

/** How code that ran in a container went: its console and time, when it ran at all. */
interface RunTrace {
  /** Console lines of prompt or template code; empty or absent for a template prompt. */
  logs?: LogEntry[];
  /** Time spent running in a container, in ms; absent when no code ran. */
  durationMs?: number;
}

/** A message `prompts/get` answers: a template's (placeholders replaced) or what code returned. */
export interface RenderedMessage {
  role: PromptMessage['role'];
  content: ContentBlock | { type: string; [field: string]: unknown };
}

/** `POST /api/servers/{sub}/prompts/{name}/render`: the messages a client would get, or the failure. */
export type PromptRenderAnswer = (
  | { ok: true; result: { description?: string; messages: RenderedMessage[] }; error?: undefined }
  | { ok: false; error: OutcomeError; result?: undefined }
) &
  RunTrace;

/** One item of `resources/read`: text or a base64 blob at a URI. */
export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

/** `POST /api/servers/{sub}/resources/{name}/read`: the contents a client would get, or the failure. */
export type ResourceReadAnswer = (
  | { ok: true; result: { contents: ResourceContents[] }; error?: undefined }
  | { ok: false; error: OutcomeError; result?: undefined }
) &
  RunTrace;
