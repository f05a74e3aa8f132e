/**
 * What the signed-in principal may do, as the roles table of
 * docs/accounts-and-keys.md says: the views offer only the controls that
 * will be accepted (the admin API checks every request again; a refusal
 * still shows its message).
 */
import { h } from './dom.js';
import { currentPrincipal } from './session.js';
import type { Role } from './account-types.js';

const ROLE_LABELS: Record<Role, string> = {
  owner: 'Owner',
  admin: 'Admin',
  operator: 'Operator',
  viewer: 'Viewer',
};

/** A role as the dashboard names it ("Operator"). */
export function roleLabel(role: Role): string {
  return ROLE_LABELS[role] ?? role;
}

/** Whether the principal may change the tools, secrets, prompts, resources and pools of `subdomain` and run them. */
export function mayOperate(subdomain: string): boolean {
  const principal = currentPrincipal();
  if (!principal) return false;
  if (principal.role === 'owner' || principal.role === 'admin') return true;
  return principal.role === 'operator' && (principal.servers ?? []).includes(subdomain);
}

/** Whether the principal may create, configure and delete servers and manage their API keys. */
export function mayAdminister(): boolean {
  const role = currentPrincipal()?.role;
  return role === 'owner' || role === 'admin';
}

/** Whether the principal may manage accounts. */
export function mayOwn(): boolean {
  return currentPrincipal()?.role === 'owner';
}

/** Whether the principal has personal API tokens (an account; the admin token has none). */
export function hasPersonalTokens(): boolean {
  return currentPrincipal()?.kind === 'account';
}

/** A note that the principal's role may read `what` but not change it. */
export function readOnlyNote(what: string): HTMLElement {
  return roleNote(`may read ${what} but not change it.`);
}

/** A note on what the principal's role may not do: "Your role (Viewer) {sentence}". */
export function roleNote(sentence: string): HTMLElement {
  const role = currentPrincipal()?.role;
  return h(
    'p',
    { class: 'hint read-only' },
    `Your role${role ? ` (${roleLabel(role)})` : ''} ${sentence}`,
  );
}

/** Disables every control inside `root`: what a role may only read stays visible but cannot be changed. */
export function disableControls(root: HTMLElement): void {
  root
    .querySelectorAll<
      HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | HTMLButtonElement
    >('input, select, textarea, button')
    .forEach((control) => (control.disabled = true));
}
