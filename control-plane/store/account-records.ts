/**
 * Records of who may do what and who did what (docs/accounts-and-keys.md):
 * accounts, dashboard sessions, credentials (API keys, personal tokens) and
 * audit entries, as the store hands them out. Secrets never appear here:
 * credentials and sessions are found by the SHA-256 of their secret.
 */
import { z } from 'zod';

/** The roles, strongest first. */
export const ROLES = ['owner', 'admin', 'operator', 'viewer'] as const;
export const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

/** An e-mail as accounts are keyed: trimmed, lower case. */
export const emailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(320)
  .pipe(z.email({ message: 'an e-mail address such as ada@example.com' }));

/** An admin account. */
export interface AccountRecord {
  readonly id: string;
  email: string;
  name: string;
  role: Role;
  /** Subdomains an operator may operate (empty for other roles). */
  servers: string[];
  /** The stored password hash, or null (no local sign-in). Never answered. */
  passwordHash: string | null;
  oidcIssuer: string | null;
  oidcSubject: string | null;
  disabled: boolean;
  lastSignInAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What creates an account. */
export type NewAccount = Pick<
  AccountRecord,
  'email' | 'name' | 'role' | 'servers' | 'passwordHash' | 'oidcIssuer' | 'oidcSubject'
>;

/** A change to an account; absent fields stay. */
export type AccountPatch = Partial<Omit<NewAccount, 'email'>> & { disabled?: boolean };

/** A dashboard session. */
export interface AdminSessionRecord {
  idHash: string;
  accountId: string;
  csrfToken: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
}

/** 'apikey': a hosted server's API key; 'personal': an account's admin API token. */
export type CredentialKind = 'apikey' | 'personal';

/** Whom a credential belongs to. */
export type CredentialOwner =
  { kind: 'apikey'; subdomain: string } | { kind: 'personal'; accountId: string };

/** A credential as stored (never its secret). */
export interface CredentialRecord {
  readonly id: string;
  kind: CredentialKind;
  /** The server of an API key, else null. */
  subdomain: string | null;
  /** The account of a personal token, else null. */
  accountId: string | null;
  label: string;
  prefix: string;
  createdBy: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** What mints a credential: the caller made the secret and hands over its hash. */
export interface NewCredential {
  owner: CredentialOwner;
  label: string;
  prefix: string;
  secretHash: string;
  createdBy: string;
  expiresAt: string | null;
}

/** Who did something, as the audit log names them. */
export interface AuditActor {
  kind: 'bootstrap' | 'account' | 'anonymous';
  /** The account's id; null for the bootstrap owner and for anonymous sign-in attempts. */
  id: string | null;
  /** An e-mail, "admin token", or what an anonymous caller claimed to be. */
  label: string;
}

export const auditOutcomeSchema = z.enum(['ok', 'denied', 'failed']);
export type AuditOutcome = z.infer<typeof auditOutcomeSchema>;

/** One audit entry as written. */
export interface AuditEntryInput {
  actor: AuditActor;
  /** e.g. `tool.save`, `secret.delete`, `sign-in.password`. */
  action: string;
  /** The server concerned, if any (operators see only their servers' entries). */
  server: string | null;
  /** What inside it, e.g. the tool's name. */
  target: string | null;
  outcome: AuditOutcome;
  clientAddress: string | null;
  requestId: string | null;
  /** What changed, never a secret value; `count`: the refusals a refusal entry stands for. */
  summary: { before?: unknown; after?: unknown; note?: string; count?: number };
}

/** One audit entry as listed. */
export interface AuditEntry extends AuditEntryInput {
  id: string;
  at: string;
}

/** Filter and page of `listAudit`. */
export const auditQuerySchema = z.strictObject({
  /** An account id or label (e-mail), exact. */
  actor: z.string().max(320).optional(),
  action: z.string().max(128).optional(),
  server: z.string().max(128).optional(),
  outcome: auditOutcomeSchema.optional(),
  /** ISO 8601 bounds, inclusive. */
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  /** From a previous page's `nextCursor`. */
  cursor: z
    .string()
    .regex(/^[0-9]{1,18}$/, 'a cursor is what a previous page answered as nextCursor')
    .optional(),
});
export type AuditQuery = z.input<typeof auditQuerySchema>;

/** One page of the audit log. */
export interface AuditPage {
  entries: AuditEntry[];
  nextCursor: string | null;
}
