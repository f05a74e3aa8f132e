/**
 * Who is calling the admin API: the bootstrap owner (the admin token) or an
 * account, and how its credential came. admin/permissions.ts decides what a
 * principal may do; admin-authentication.ts finds it.
 */
import type { Role } from '../store/index.js';

/** Who is calling the admin API. */
export interface Principal {
  kind: 'bootstrap' | 'account';
  /** The account's id; null for the bootstrap owner. */
  id: string | null;
  email: string | null;
  name: string;
  role: Role;
  /** An operator's servers; empty for the other roles. */
  servers: readonly string[];
  /** How the credential came. */
  via: 'admin-token' | 'personal-token' | 'session';
  /** A session's CSRF token and the SHA-256 of its cookie (`via: 'session'` only). */
  session?: { idHash: string; csrfToken: string };
}

/** The bootstrap owner: whoever holds ADMIN_TOKEN (or the generated admin token). */
export const BOOTSTRAP_PRINCIPAL: Principal = Object.freeze({
  kind: 'bootstrap',
  id: null,
  email: null,
  name: 'admin token',
  role: 'owner',
  servers: Object.freeze([]) as readonly string[],
  via: 'admin-token',
}) as Principal;
