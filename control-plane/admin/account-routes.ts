/**
 * /api/accounts (owner only): the people who may use the admin side, each
 * with a role and, for operators, the servers they operate, and their
 * personal tokens; and /api/me/tokens: an account's own personal API tokens
 * for the admin API.
 * Passwords are hashed before anything is stored and never answered.
 */
import { z } from 'zod';
import { hashPassword, passwordSchema } from '../identity/index.js';
import { McphostError } from '../errors.js';
import { parseInput, sendJson, sendNoContent } from '../http/index.js';
import { emailSchema, roleSchema, subdomainSchema, type AccountPatch } from '../store/index.js';
import { readJson, type AdminContext } from './admin-context.js';
import { accountView, snapshots } from './audit-snapshots.js';
import { credentialView, issueCredential, NewCredentialBody } from './credential-views.js';
import {
  auditActorOf,
  idOfAnswer,
  principalOf,
  type AdminRouter,
  type Principal,
} from './permissions.js';

const oidcSubjectSchema = z.string().trim().min(1).max(255).nullable();

/** POST /api/accounts. */
export const NewAccountBody = z
  .strictObject({
    email: emailSchema,
    name: z.string().trim().max(128).optional(),
    role: roleSchema,
    servers: z.array(subdomainSchema).max(1000).optional(),
    password: passwordSchema.optional(),
    oidcSubject: oidcSubjectSchema.optional(),
  })
  .superRefine(checkServersForRole);

/** PATCH /api/accounts/{id}. */
export const AccountPatchBody = z.strictObject({
  name: z.string().trim().max(128).optional(),
  role: roleSchema.optional(),
  servers: z.array(subdomainSchema).max(1000).optional(),
  /** null removes local sign-in. */
  password: passwordSchema.nullable().optional(),
  oidcSubject: oidcSubjectSchema.optional(),
  disabled: z.boolean().optional(),
});

function checkServersForRole(
  body: { role?: string; servers?: string[] },
  ctx: z.RefinementCtx,
): void {
  if (body.role === 'operator' && (body.servers === undefined || body.servers.length === 0)) {
    ctx.addIssue({
      code: 'custom',
      path: ['servers'],
      message: 'an operator needs the servers it may operate',
    });
  }
  if (body.role !== undefined && body.role !== 'operator' && (body.servers?.length ?? 0) > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['servers'],
      message: `servers apply to operators only; the ${body.role} role covers every server`,
    });
  }
}

export function addAccountRoutes(router: AdminRouter, context: AdminContext): void {
  const { config, store } = context;
  const { passwordWork } = context.signIn;
  const before = snapshots(context).account;
  const oidcIssuer = config.adminOidcIssuer ?? null;
  const requireOidc = (subject: string | null | undefined) => {
    if (subject != null && oidcIssuer === null) {
      throw new McphostError(
        'ERR_VALIDATION',
        'oidcSubject needs single sign-on: set ADMIN_OIDC_ISSUER first',
        { details: [{ path: 'oidcSubject', message: 'no OpenID provider is set' }] },
      );
    }
  };

  router.add('GET', '/api/accounts', { permission: 'own' }, async ({ res }) => {
    sendJson(res, 200, { accounts: (await store.listAccounts()).map(accountView) });
  });

  const create = {
    permission: 'own',
    audit: { action: 'account.create', target: idOfAnswer },
  } as const;
  router.add('POST', '/api/accounts', create, async ({ req, res }) => {
    const body = await readJson(req, config.maxBodyBytes, NewAccountBody, 'account');
    requireOidc(body.oidcSubject);
    const password = body.password;
    const account = await store.createAccount({
      email: body.email,
      name: body.name ?? '',
      role: body.role,
      servers: body.servers ?? [],
      passwordHash:
        body.password === undefined ? null : await passwordWork.run(() => hashPassword(password!)),
      oidcIssuer,
      oidcSubject: body.oidcSubject ?? null,
    });
    // Without single sign-on, an account with no password has no way in yet: said, not refused
    // (the owner may mean to set the password later).
    const warnings =
      account.passwordHash === null && oidcIssuer === null
        ? ['this account cannot sign in yet: give it a password (PATCH with {password})']
        : [];
    sendJson(res, 201, { ...accountView(account), warnings });
  });

  const change = { permission: 'own', audit: { action: 'account.change', before } } as const;
  router.add('PATCH', '/api/accounts/:id', change, async ({ req, res, params }) => {
    const body = await readJson(req, config.maxBodyBytes, AccountPatchBody, 'account change');
    requireOidc(body.oidcSubject);
    const current = await store.findAccount({ id: params.id! });
    if (!current) throw new McphostError('ERR_NOT_FOUND', `account "${params.id}" does not exist`);
    const role = body.role ?? current.role;
    // The role and servers the account will have, checked together.
    parseInput(
      AccountPatchBody.superRefine(checkServersForRole),
      { role, servers: body.servers ?? (role === 'operator' ? current.servers : []) },
      'account change',
    );
    const patch: AccountPatch = {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.role === undefined ? {} : { role: body.role }),
      ...(body.servers === undefined ? {} : { servers: body.servers }),
      ...(body.disabled === undefined ? {} : { disabled: body.disabled }),
      ...(body.oidcSubject === undefined ? {} : { oidcSubject: body.oidcSubject, oidcIssuer }),
      ...(body.password === undefined
        ? {}
        : {
            passwordHash:
              body.password === null
                ? null
                : await passwordWork.run(() => hashPassword(body.password!)),
          }),
    };
    sendJson(res, 200, accountView(await store.updateAccount(params.id!, patch)));
  });

  const remove = { permission: 'own', audit: { action: 'account.delete', before } } as const;
  router.add('DELETE', '/api/accounts/:id', remove, async ({ res, params }) => {
    await store.deleteAccount(params.id!);
    sendNoContent(res);
  });

  // An owner sees and revokes anyone's personal tokens: after an intrusion, or for a person
  // who left, without waiting for them to sign in.
  const requireAccount = async (id: string) => {
    const account = await store.findAccount({ id });
    if (!account) throw new McphostError('ERR_NOT_FOUND', `account "${id}" does not exist`);
    return account;
  };
  router.add('GET', '/api/accounts/:id/tokens', { permission: 'own' }, async ({ res, params }) => {
    await requireAccount(params.id!);
    const tokens = await store.listCredentials({ kind: 'personal', accountId: params.id! });
    sendJson(res, 200, { tokens: tokens.map((token) => credentialView(token)) });
  });
  const revokeTheirs = {
    permission: 'own',
    audit: { action: 'personal-token.revoke' },
  } as const;
  router.add(
    'DELETE',
    '/api/accounts/:id/tokens/:tokenId',
    revokeTheirs,
    async ({ res, params }) => {
      await requireAccount(params.id!);
      await store.revokeCredential({ kind: 'personal', accountId: params.id! }, params.tokenId!);
      sendNoContent(res);
    },
  );

  addPersonalTokenRoutes(router, context);
}

/** /api/me/tokens: the signed-in account's own tokens for the admin API. */
function addPersonalTokenRoutes(router: AdminRouter, context: AdminContext): void {
  const { config, store } = context;
  const accountIdOf = (principal: Principal): string => {
    if (principal.id === null) {
      throw new McphostError(
        'ERR_CONFLICT',
        'the admin token is a configuration credential: it has no personal tokens; sign in with an account',
      );
    }
    return principal.id;
  };

  router.add('GET', '/api/me/tokens', { permission: 'self' }, async (route) => {
    const accountId = accountIdOf(principalOf(route));
    const tokens = await store.listCredentials({ kind: 'personal', accountId });
    sendJson(route.res, 200, { tokens: tokens.map((token) => credentialView(token)) });
  });

  const create = {
    permission: 'self',
    audit: { action: 'personal-token.create', target: idOfAnswer },
  } as const;
  router.add('POST', '/api/me/tokens', create, async (route) => {
    const principal = principalOf(route);
    const accountId = accountIdOf(principal);
    const body = await readJson(route.req, config.maxBodyBytes, NewCredentialBody, 'token');
    const issued = await issueCredential(
      store,
      { kind: 'personal', accountId },
      body,
      auditActorOf(principal).label,
    );
    sendJson(route.res, 201, {
      ...issued.view,
      token: issued.secret,
      note: 'this token is shown only now; it acts with your role until it expires or is revoked',
    });
  });

  const revoke = { permission: 'self', audit: { action: 'personal-token.revoke' } } as const;
  router.add('DELETE', '/api/me/tokens/:id', revoke, async (route) => {
    const accountId = accountIdOf(principalOf(route));
    await store.revokeCredential({ kind: 'personal', accountId }, route.params.id!);
    sendNoContent(route.res);
  });
}
