/**
 * The "Sharing this host" form of the Settings tab: how a server shares the
 * machine with other tenants — container isolation and runtime, its container
 * maximum, the private hosts its tools may reach, the browser origins that
 * may call it, and its rate limit. One PATCH with only these fields; a
 * refusal is shown inline and the form keeps what was typed.
 */
import { api, segment } from './api.js';
import { announce, h } from './dom.js';
import { mayAdminister } from './permissions.js';
import type { ServerInfo } from './types.js';

/** The form for `server`; `onSaved` receives the server as the control plane answered. */
export function createTenancyForm(
  server: ServerInfo,
  onSaved: (updated: ServerInfo) => void,
): HTMLFormElement {
  const isolation = select('tenancy-isolation', [
    ['server', 'Server: its tools share containers (default)'],
    ['tool', 'Tool: a container per tool'],
  ]);
  isolation.value = server.isolation;
  const runtime = select('tenancy-runtime', [
    ['runc', 'runc (default)'],
    ['runsc', 'gVisor (runsc)'],
  ]);
  runtime.value = server.runtime;
  const maxContainers = numberInput('tenancy-max-containers', server.maxContainers);
  const egress = h('textarea', { id: 'tenancy-egress', rows: 3, spellcheck: false });
  egress.value = server.egressAllow.join('\n');
  const origins = h('textarea', { id: 'tenancy-origins', rows: 2, spellcheck: false });
  origins.value = server.allowedOrigins.join('\n');
  const perMinute = numberInput('tenancy-rate', server.rateLimit?.perMinute);
  const burst = numberInput('tenancy-burst', server.rateLimit?.burst);
  const errorBox = h('p', { role: 'alert', class: 'error', id: 'tenancy-error' });
  const saved = h('p', { role: 'status', class: 'ok' });
  const warningList = h('ul', { class: 'warnings', 'aria-label': 'Warnings', hidden: true });
  /** Shows what the control plane stored (it may normalise origins, fill in burst). */
  const show = (settings: ServerInfo): void => {
    isolation.value = settings.isolation;
    runtime.value = settings.runtime;
    maxContainers.value = settings.maxContainers === null ? '' : String(settings.maxContainers);
    egress.value = settings.egressAllow.join('\n');
    origins.value = settings.allowedOrigins.join('\n');
    perMinute.value = settings.rateLimit === null ? '' : String(settings.rateLimit.perMinute);
    burst.value = settings.rateLimit === null ? '' : String(settings.rateLimit.burst);
  };

  const form = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'tenancy-heading',
      onsubmit: async (event) => {
        event.preventDefault();
        errorBox.textContent = '';
        saved.textContent = '';
        const rate =
          perMinute.value.trim() === '' && burst.value.trim() === ''
            ? null
            : { perMinute: Number(perMinute.value), burst: Number(burst.value || perMinute.value) };
        const body = {
          isolation: isolation.value,
          runtime: runtime.value,
          maxContainers: maxContainers.value.trim() === '' ? null : Number(maxContainers.value),
          egressAllow: lines(egress.value),
          allowedOrigins: lines(origins.value),
          rateLimit: rate,
        };
        try {
          const updated = await api<ServerInfo>(
            'PATCH',
            `/api/servers/${segment(server.subdomain)}/settings`,
            body,
          );
          onSaved(updated);
          show(updated);
          const warnings = updated.warnings ?? [];
          warningList.replaceChildren(...warnings.map((warning) => h('li', {}, warning)));
          warningList.hidden = warnings.length === 0;
          saved.textContent = 'Saved.';
          announce('Sharing settings saved.');
        } catch (error) {
          errorBox.textContent = `Not saved: ${(error as Error).message}`;
        }
      },
    },
    h('h2', { id: 'tenancy-heading' }, 'Sharing this host'),
    field(
      'tenancy-isolation',
      'Container isolation',
      isolation,
      'Changing isolation or runtime retires the server’s warm containers; its next calls start new ones.',
    ),
    field('tenancy-runtime', 'Container runtime', runtime),
    field(
      'tenancy-max-containers',
      'Most containers at once',
      maxContainers,
      'Empty: up to POOL_SERVER_SHARE (half) of the host’s container budget. A cap, not a reservation.',
    ),
    field(
      'tenancy-egress',
      'Private hosts its tools may reach',
      egress,
      'One per line: an IP, CIDR, host name or *.suffix, with an optional :port (10.0.0.5:5432, 10.0.0.0/8:443, db.internal:5432).',
    ),
    field(
      'tenancy-origins',
      'Browser origins allowed to call /mcp',
      origins,
      'One per line, e.g. https://app.example.com. Requests without an Origin are unaffected.',
    ),
    field(
      'tenancy-rate',
      'Requests per minute per caller',
      perMinute,
      'Empty: the service default.',
    ),
    field(
      'tenancy-burst',
      'Burst',
      burst,
      'Requests at once before the rate applies; empty: the rate.',
    ),
    errorBox,
    warningList,
    saved,
    mayAdminister() ? h('button', { type: 'submit' }, 'Save sharing settings') : null,
  );
  return form;
}

/** A short whole-number field, empty when the setting is unset. */
function numberInput(id: string, value: number | null | undefined): HTMLInputElement {
  return h('input', { id, type: 'number', min: 1, class: 'short', value: value ?? '' });
}

function select(id: string, options: [string, string][]): HTMLSelectElement {
  return h(
    'select',
    { id },
    options.map(([value, label]) => h('option', { value }, label)),
  );
}

function field(id: string, label: string, control: HTMLElement, hint?: string): HTMLElement {
  const hintId = `${id}-hint`;
  if (hint) control.setAttribute('aria-describedby', hintId);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    control,
    hint ? h('span', { id: hintId, class: 'hint' }, hint) : null,
  );
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}
