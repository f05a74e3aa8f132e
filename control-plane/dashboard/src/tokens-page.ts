/**
 * `#/tokens`, "Your API tokens": the personal tokens of the signed-in
 * account, with which scripts call the admin API as that account with its
 * role — list, create (shown once), revoke. The admin token has none: it is
 * a configuration credential.
 */
import { renderCredentialPanel } from './credential-panel.js';
import { h, replaceChildren } from './dom.js';
import { roleLabel } from './permissions.js';
import { currentPrincipal } from './session.js';

/** Renders the page into `main`. */
export async function renderTokensPage(main: HTMLElement): Promise<void> {
  const principal = currentPrincipal();
  const heading = h('h1', { tabindex: -1 }, 'Your API tokens');
  if (principal?.kind !== 'account') {
    replaceChildren(
      main,
      heading,
      h(
        'p',
        {},
        'The admin token is a configuration credential: it has no personal tokens. Sign in with an account to create them.',
      ),
    );
    return;
  }
  const panel = h('div');
  await renderCredentialPanel(panel, {
    path: '/api/me/tokens',
    noun: 'token',
    idPrefix: 'token',
    listField: 'tokens',
    valueField: 'token',
    usage: 'Scripts send it to the admin API as Authorization: Bearer <token>.',
    showCreatedBy: false,
  });
  replaceChildren(
    main,
    heading,
    h(
      'p',
      { class: 'hint' },
      `A token calls the admin API as you, with your role (${roleLabel(principal.role)}): whatever your account may do, so may a script holding it. Deleting your account revokes them.`,
    ),
    panel,
  );
}
