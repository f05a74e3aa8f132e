/**
 * The public face of mcp/: what other folders may import (eslint.config.js holds the rule).
 */
export { createHostedMcpServer, type HostedSession } from './hosted-mcp-server.js';
export { createModernEra, type ChangeAudience, type ModernEra } from './modern-era.js';
export { findResourceChanges } from './resource-updates.js';
export { createHostedSide } from './hosted-side.js';
export { McpEndpoint } from './mcp-endpoint.js';
export { RateLimiter } from './rate-limiter.js';
export { ResumeBudget, type ResumeBudgetOptions } from './resume-budget.js';
export { SessionRegistry } from './session-registry.js';
export { SharedSessions } from './shared-sessions.js';
