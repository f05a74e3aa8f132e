/**
 * The sign-in screen, offering what `GET /api/auth/methods` says this control
 * plane accepts: single sign-on (a link that starts the OpenID Connect flow
 * and comes back to the page it left), an account's e-mail and password, and
 * the admin token for setting up and recovery. One form holds both
 * credentials with one Sign in button: the account's when it is filled in,
 * else the token. Failures are said plainly and the field keeps focus.
 * The first field focused is the one likely to be used: the admin token
 * while no account exists (or this browser has only ever signed in with it),
 * the e-mail once this browser signed in with an account.
 */
import { ApiError, api, forgetToken, storeToken } from './api.js';
import { h, replaceChildren } from './dom.js';
import { fetchAuthMethods, startSession } from './session.js';
import type { AuthMethods, SessionAnswer } from './account-types.js';

/** Which way this browser last signed in ("password" or "token"); not a credential. */
const LAST_METHOD_KEY = 'mcphost.lastSignInMethod';

/** What the screen shows: a notice (why the user is here, a failed single sign-on) and what to do once signed in. */
export interface SignInOptions {
  notice?: string;
  /** The route to open with single sign-on once back (the current one). */
  returnTo: string;
  onSignedIn(): void;
}

/** Renders the screen into `main`. */
export async function renderSignIn(main: HTMLElement, options: SignInOptions): Promise<void> {
  const methods = await fetchAuthMethods();
  const email = h('input', {
    id: 'sign-in-email',
    name: 'email',
    type: 'email',
    autocomplete: 'username',
  });
  const password = h('input', {
    id: 'sign-in-password',
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
  });
  const token = h('input', {
    id: 'admin-token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    'aria-describedby': 'token-help',
  });
  const message = h(
    'p',
    { role: 'alert', class: 'error', id: 'sign-in-error' },
    options.notice ?? '',
  );
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');

  /** Marks `fields` as what the message is about and focuses the first. */
  const refuse = (text: string, fields: HTMLInputElement[]) => {
    message.textContent = text;
    for (const field of [email, password, token]) field.removeAttribute('aria-invalid');
    for (const field of fields) field.setAttribute('aria-invalid', 'true');
    fields[0]?.focus();
  };

  const submit = async () => {
    message.textContent = '';
    const account = email.value.trim() !== '' || password.value !== '';
    const adminToken = token.value.trim();
    if (account && adminToken !== '') {
      refuse('Fill in your e-mail and password or the admin token, not both.', [email, token]);
      return;
    }
    if (!account && adminToken === '') {
      refuse(
        methods.password
          ? 'Enter your e-mail and password, or the admin token.'
          : 'Enter the admin token.',
        [methods.password ? email : token],
      );
      return;
    }
    if (account && (email.value.trim() === '' || password.value === '')) {
      refuse('Enter both your e-mail and your password.', [
        email.value.trim() === '' ? email : password,
      ]);
      return;
    }
    button.disabled = true;
    try {
      if (account) {
        const answer = await api<SessionAnswer>(
          'POST',
          '/api/auth/password',
          { email: email.value.trim(), password: password.value },
          null,
        );
        // A cookie session from now on: a token left from before would take precedence.
        forgetToken();
        startSession(answer);
      } else {
        startSession(await api<SessionAnswer>('GET', '/api/session', undefined, adminToken));
        storeToken(adminToken);
      }
      rememberMethod(account ? 'password' : 'token');
    } catch (error) {
      password.value = '';
      refuse(
        failureMessage(error, account),
        account ? [methods.password ? password : email] : [token],
      );
      return;
    } finally {
      button.disabled = false;
    }
    options.onSignedIn();
  };

  const form = h(
    'form',
    {
      class: 'card narrow',
      'aria-labelledby': 'sign-in-heading',
      onsubmit: (event) => {
        event.preventDefault();
        void submit();
      },
    },
    h('h1', { id: 'sign-in-heading', tabindex: -1 }, 'Sign in'),
    message,
    methods.oidc
      ? h(
          'p',
          { class: 'single-sign-on' },
          h(
            'a',
            {
              class: 'button-link',
              href: `/auth/oidc/start?returnTo=${encodeURIComponent(options.returnTo)}`,
            },
            ssoLinkText(methods.oidc.label),
          ),
        )
      : null,
    methods.password
      ? h(
          'fieldset',
          { class: 'sign-in-method' },
          h('legend', {}, methods.oidc ? 'Or with your e-mail and password' : 'Your account'),
          h('div', { class: 'field' }, h('label', { for: email.id }, 'E-mail'), email),
          h('div', { class: 'field' }, h('label', { for: password.id }, 'Password'), password),
        )
      : null,
    methods.token
      ? h(
          'fieldset',
          { class: 'sign-in-method' },
          h('legend', {}, methods.password ? 'Or, to set up and recover' : 'Setting up'),
          h(
            'div',
            { class: 'field' },
            h('label', { for: token.id }, 'Admin token'),
            token,
            h(
              'span',
              { id: 'token-help', class: 'hint' },
              'Printed once by the control plane at its first start, or the ADMIN_TOKEN you set. It stays in this tab only.',
            ),
          ),
        )
      : null,
    button,
  );
  replaceChildren(main, form);
  (firstMethod(methods) === 'password' ? email : token).focus();
}

/**
 * The way to sign in whose field gets focus: the only one offered; else the
 * token while no account exists; else the way this browser last used; else
 * the e-mail where accounts are known to exist, the token where nothing is
 * known (a first start, where the admin token is all there is).
 */
function firstMethod(methods: AuthMethods): 'password' | 'token' {
  if (!methods.token) return 'password';
  if (!methods.password || methods.accounts === false) return 'token';
  const last = readMethod();
  if (last !== undefined) return last;
  return methods.accounts === true ? 'password' : 'token';
}

function readMethod(): 'password' | 'token' | undefined {
  try {
    const value = localStorage.getItem(LAST_METHOD_KEY);
    return value === 'password' || value === 'token' ? value : undefined;
  } catch {
    // Storage refused (a privacy setting): nothing is known.
    return undefined;
  }
}

function rememberMethod(method: 'password' | 'token'): void {
  try {
    localStorage.setItem(LAST_METHOD_KEY, method);
  } catch {
    // Storage refused: the next visit guesses again.
  }
}

/** The link's text: the configured label, said as an action when it is only a name ("Acme" → "Sign in with Acme"). */
function ssoLinkText(label: string): string {
  const trimmed = label.trim();
  if (trimmed === '') return 'Sign in with single sign-on';
  return /^sign in/i.test(trimmed) ? trimmed : `Sign in with ${trimmed}`;
}

/** A refused sign-in in plain words. */
function failureMessage(error: unknown, account: boolean): string {
  if (!(error instanceof ApiError)) return (error as Error).message;
  if (error.code === 'ERR_SIGN_IN_THROTTLED' || error.status === 429) {
    return `Too many attempts to sign in. ${waitText(error.retryAfterSeconds)}`;
  }
  if (error.status === 401) {
    return account
      ? 'That e-mail and password do not match an account. Check them and try again.'
      : 'That admin token is not correct. Check it and try again.';
  }
  return error.message;
}

function waitText(seconds: number | undefined): string {
  if (seconds === undefined) return 'Wait a moment and try again.';
  if (seconds < 90) return `Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;
  const minutes = Math.ceil(seconds / 60);
  return `Try again in ${minutes} minutes.`;
}
