/**
 * Who made a call, as recorded in the invocation log (never a token or a
 * key's value): found by the hosted side's gate (http/server-gate.ts), or
 * named by the admin side for a test run.
 */
export type Caller =
  | { kind: 'anonymous' }
  /** A test run from the admin side, by whom (an account's e-mail, or "admin token"). */
  | { kind: 'admin'; actor?: string }
  | { kind: 'oauth'; subject?: string; clientId?: string }
  /** A hosted server's API key, by its id and label. */
  | { kind: 'apikey'; keyId: string; label: string };
