/**
 * The answers of the admin API about who is signed in, accounts, personal
 * API tokens and hosted servers' API keys, which its routes build inline
 * (docs/accounts-and-keys.md): declared here, as types.ts does for the
 * others. The role and the audit log's entries are the store's own types,
 * imported (`import type`: erased from the bundle).
 */
import type { AuditEntry, AuditPage, Role } from '../../store/index.js';

export type { AuditEntry, AuditPage, Role };

/** Who a request is: the bootstrap owner (the admin token) or an account. */
export interface Principal {
  kind: 'bootstrap' | 'account';
  /** The account's id; null for the bootstrap owner. */
  id?: string | null;
  email?: string | null;
  name: string;
  role: Role;
  /** The subdomains an operator may work on; empty or absent for the other roles. */
  servers?: readonly string[];
}

/** `GET /api/session`, and a successful `POST /api/auth/password`. */
export interface SessionAnswer {
  principal: Principal;
  /** Sent back as `X-CSRF-Token` on writes; absent for a bearer request. */
  csrfToken?: string;
}

/** `GET /api/auth/methods`: which ways of signing in this control plane offers. */
export interface AuthMethods {
  password: boolean;
  oidc: { label: string } | null;
  token: boolean;
  /** Whether any account exists; absent where the control plane does not say. */
  accounts?: boolean;
}

/** An account as `GET /api/accounts` lists it (never its password). */
export interface Account {
  id: string;
  email: string;
  name: string;
  role: Role;
  servers: string[];
  /** Whether the account has a password (it may sign in with single sign-on only). */
  password: boolean;
  oidcSubject: string | null;
  disabled: boolean;
  lastSignInAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A personal API token or a hosted server's API key, without its value. */
export interface CredentialView {
  id: string;
  label: string;
  /** The first characters of the value, so its holder can tell which one it is. */
  prefix: string;
  createdAt: string;
  /** Who created an API key (absent for personal tokens). */
  createdBy?: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  status: 'active' | 'expired' | 'revoked';
}
