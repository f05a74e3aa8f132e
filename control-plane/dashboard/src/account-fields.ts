/**
 * The access part of an account's form: its role (with what each may do)
 * and, for an operator, the servers it works on as a group of checkboxes.
 * Shared by the creation form and the account editor.
 */
import { h } from './dom.js';
import { roleLabel } from './permissions.js';
import type { Role } from './account-types.js';

const ROLES: Role[] = ['viewer', 'operator', 'admin', 'owner'];

/** What each role may do, in a sentence. */
const ROLE_HINTS: Record<Role, string> = {
  owner: 'Everything, including accounts and rotating the admin token.',
  admin: 'Every server: create, settings, API keys, delete, and everything an operator may.',
  operator:
    'Only the servers chosen below: their tools, secrets, prompts, resources, pools and test runs.',
  viewer: 'Reads everything an admin reads and changes nothing; never sees a secret value.',
};

/** The fields and what they hold. */
export interface AccessFields {
  readonly elements: HTMLElement[];
  /** The role, and the servers when it is operator (the API takes them for operators only). */
  value(): { role: Role; servers?: string[] };
}

/** Builds the fields; `serverNames` are the servers an operator may be given. */
export function createAccessFields(
  idPrefix: string,
  serverNames: readonly string[],
  initial: { role: Role; servers: readonly string[] } = { role: 'viewer', servers: [] },
): AccessFields {
  const role = h(
    'select',
    { id: `${idPrefix}-role`, 'aria-describedby': `${idPrefix}-role-help` },
    ROLES.map((value) => h('option', { value }, roleLabel(value))),
  );
  role.value = initial.role;
  const roleHelp = h('span', { id: `${idPrefix}-role-help`, class: 'hint' });
  // Servers the account had that no longer exist stay listed, so saving does not drop them silently.
  const names = [...new Set([...serverNames, ...initial.servers])].sort();
  const boxes = names.map((name, index) => {
    const box = h('input', { type: 'checkbox', id: `${idPrefix}-server-${index}`, value: name });
    box.checked = initial.servers.includes(name);
    return box;
  });
  const servers = h(
    'fieldset',
    { class: 'server-choices' },
    h('legend', {}, 'Servers this operator works on'),
    names.length === 0
      ? h('p', { class: 'hint' }, 'There are no servers yet: create one first.')
      : boxes.map((box) =>
          h('div', { class: 'field checkbox' }, box, h('label', { for: box.id }, box.value)),
        ),
  );
  const update = () => {
    roleHelp.textContent = ROLE_HINTS[role.value as Role];
    servers.hidden = role.value !== 'operator';
  };
  role.addEventListener('change', update);
  update();
  return {
    elements: [
      h('div', { class: 'field' }, h('label', { for: role.id }, 'Role'), role, roleHelp),
      servers,
    ],
    value: () => {
      const chosen = role.value as Role;
      return chosen === 'operator'
        ? { role: chosen, servers: boxes.filter((box) => box.checked).map((box) => box.value) }
        : { role: chosen };
    },
  };
}
