/**
 * The page header once signed in: links to the sections the principal may
 * open (the audit log, accounts for an owner, personal API tokens for an
 * account), who is signed in with which role, and Sign out.
 */
import { h, replaceChildren } from './dom.js';
import { hasPersonalTokens, mayOwn, roleLabel } from './permissions.js';
import type { Principal } from './account-types.js';

/** Fills the header for `principal` (empties it when signed out); `onSignOut` runs on Sign out. */
export function renderHeader(principal: Principal | null, onSignOut: () => void): void {
  const sections = document.getElementById('sections')!;
  const account = document.getElementById('account')!;
  // No empty navigation landmark while signed out.
  sections.hidden = principal === null;
  if (!principal) {
    sections.replaceChildren();
    account.replaceChildren();
    return;
  }
  const current = location.hash.replace(/\?.*$/, '');
  const link = (href: string, text: string) =>
    h('li', {}, h('a', { href, 'aria-current': current === href ? 'page' : undefined }, text));
  replaceChildren(
    sections,
    h(
      'ul',
      {},
      link('#/audit', 'Audit log'),
      mayOwn() ? link('#/accounts', 'Accounts') : null,
      hasPersonalTokens() ? link('#/tokens', 'Your API tokens') : null,
    ),
  );
  const who =
    principal.kind === 'bootstrap'
      ? 'the admin token'
      : principal.name || principal.email || 'an account';
  replaceChildren(
    account,
    h(
      'span',
      { class: 'who', id: 'signed-in-as' },
      'Signed in as ',
      h('strong', {}, who),
      principal.email && principal.email !== who ? ` (${principal.email})` : '',
      ` · ${roleLabel(principal.role)}`,
    ),
    h('button', { type: 'button', onclick: onSignOut }, 'Sign out'),
  );
}
