/**
 * Who may use which permission (permits) and which servers a principal sees
 * (visibleServers), for every role × permission, on an operator's own
 * server, another server and no server; written out from the contract's
 * table (docs/accounts-and-keys.md, "Roles"), not derived from the code.
 */
import { describe, expect, it } from 'vitest';
import {
  auditActorOf,
  BOOTSTRAP_PRINCIPAL,
  permits,
  visibleServers,
  type Permission,
  type Principal,
} from '../../../control-plane/admin/permissions.js';

type Role = Principal['role'];

function principal(role: Role, servers: string[] = []): Principal {
  return {
    kind: 'account',
    id: `id-${role}`,
    email: `${role}@example.test`,
    name: role,
    role,
    servers,
    via: 'personal-token',
  };
}

const OWN = 'alpha';
const OTHER = 'beta';
const principals: Record<Role, Principal> = {
  owner: principal('owner'),
  admin: principal('admin'),
  operator: principal('operator', [OWN, 'gamma']),
  viewer: principal('viewer'),
};

/** The contract's table: yes, no, or (operator) only on its own servers. */
const TABLE: Record<Exclude<Permission, 'public'>, Record<Role, 'yes' | 'no' | 'its servers'>> = {
  read: { owner: 'yes', admin: 'yes', operator: 'its servers', viewer: 'yes' },
  operate: { owner: 'yes', admin: 'yes', operator: 'its servers', viewer: 'no' },
  administer: { owner: 'yes', admin: 'yes', operator: 'no', viewer: 'no' },
  own: { owner: 'yes', admin: 'no', operator: 'no', viewer: 'no' },
  self: { owner: 'yes', admin: 'yes', operator: 'yes', viewer: 'yes' },
};

const cases = Object.entries(TABLE).flatMap(([permission, byRole]) =>
  Object.entries(byRole).map(([role, rule]) => ({
    permission: permission as Permission,
    role: role as Role,
    rule,
  })),
);

describe('permits', () => {
  it.each(cases)('$role × $permission: $rule', ({ permission, role, rule }) => {
    const who = principals[role];
    expect(permits(who, permission, OWN), 'own server').toBe(rule !== 'no');
    expect(permits(who, permission, OTHER), 'another server').toBe(rule === 'yes');
    // A route naming no server (a list, filtered by the handler, or the account's own things).
    expect(permits(who, permission, undefined), 'no server').toBe(rule !== 'no');
  });

  it('treats the bootstrap token as an owner', () => {
    for (const permission of ['read', 'operate', 'administer', 'own', 'self'] as const) {
      expect(permits(BOOTSTRAP_PRINCIPAL, permission, OTHER), permission).toBe(true);
    }
  });

  it('lets anyone, signed in or not, use a public route and nothing else without a principal', () => {
    expect(permits(undefined, 'public', undefined)).toBe(true);
    expect(permits(principals.viewer, 'public', OTHER)).toBe(true);
    for (const permission of ['read', 'operate', 'administer', 'own', 'self'] as const) {
      expect(permits(undefined, permission, undefined), permission).toBe(false);
      expect(permits(undefined, permission, OWN), permission).toBe(false);
    }
  });

  it('gives an operator without servers no server', () => {
    const bare = principal('operator', []);
    expect(permits(bare, 'read', OWN)).toBe(false);
    expect(permits(bare, 'operate', OWN)).toBe(false);
    expect(visibleServers(bare)).toEqual([]);
  });

  it('goes by the role, not by a servers list another role happens to carry', () => {
    // Only operators are scoped: a viewer's servers (never set by the API) change nothing.
    const viewer = principal('viewer', [OWN]);
    expect(permits(viewer, 'operate', OWN)).toBe(false);
    expect(permits(viewer, 'read', OTHER)).toBe(true);
  });
});

describe('visibleServers', () => {
  it.each(['owner', 'admin', 'viewer'] as const)('is every server for %s', (role) => {
    expect(visibleServers(principals[role])).toBeUndefined();
  });

  it('is its own servers for an operator', () => {
    expect(visibleServers(principals.operator)).toEqual([OWN, 'gamma']);
  });

  it('is every server for the bootstrap token', () => {
    expect(visibleServers(BOOTSTRAP_PRINCIPAL)).toBeUndefined();
  });
});

describe('auditActorOf', () => {
  it('names the bootstrap token “admin token” and an account by its e-mail', () => {
    expect(auditActorOf(BOOTSTRAP_PRINCIPAL)).toEqual({
      kind: 'bootstrap',
      id: null,
      label: 'admin token',
    });
    expect(auditActorOf(principals.operator)).toEqual({
      kind: 'account',
      id: 'id-operator',
      label: 'operator@example.test',
    });
  });
});
