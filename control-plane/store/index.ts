/** The store's public surface: open it, cache its configuration, log invocations. */
export { openStore, type Store, type StoreOptions } from './store.js';
export {
  ConfigCache,
  type CachedServer,
  type ConfigCacheOptions,
  type NamedRecords,
} from './config-cache.js';
export type { VersionRetention } from './version-retention.js';
export { InvocationLog, type InvocationLogOptions } from './invocation-log.js';
export { loadMasterKey, parseMasterKey, type LoadMasterKeyOptions } from './master-key.js';
export type { StoreChange, StoreChangeKind } from './change-feed.js';
export type {
  McpSessionQuotas,
  McpSessionRow,
  McpStreamEventRow,
  SessionSignal,
} from './session-records.js';
export { WRITTEN_BY_META_KEY, type StoreDialectName } from './store-dialect.js';
export * from './records.js';
export * from './refusal-records.js';
export * from './account-records.js';
export {
  createToolSchemaCompiler,
  JSON_SCHEMA_2020_12,
  pointerToPath,
  TOOL_SCHEMA_MAX_CHARACTERS,
  TOOL_SCHEMA_MAX_DEPTH,
  type ToolJsonSchema,
} from './tool-json-schema.js';
export { schemaCost, TOOL_SCHEMA_MAX_WEIGHT, type SchemaCost } from './tool-schema-cost.js';
export type { StoreBackup } from './backup.js';
export * from './entry-records.js';
export * from './prompt-records.js';
export * from './resource-records.js';
export * from './completion-records.js';
export {
  MAX_TEMPLATE_VARIABLES,
  parseUriTemplate,
  UriTemplateError,
  type UriTemplate,
} from './uri-template.js';
export { mcpHeaderDeclarations, type McpHeaderDeclaration } from './mcp-header-declarations.js';
