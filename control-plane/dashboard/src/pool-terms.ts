/**
 * The words of the warm-pools card explained where they appear: a legend
 * that is always on the page (open by default; a reader may fold it), and a
 * pool's shape (`128m-0.5c-64p-runc`) spelled out beside it. Nothing of it
 * hides behind a mouse hover.
 */
import { h } from './dom.js';

/** The terms and what they mean, in the order the card uses them. */
const TERMS: [string, string][] = [
  ['Warm · busy · starting', 'Containers ready and idle · running a call · being started.'],
  ['Queued', 'Calls waiting for a container of this server.'],
  [
    'Fair share',
    'The part of the machine’s container budget this server keeps when other servers need room: the budget divided between the servers using containers now. Idle containers above it may be evicted.',
  ],
  [
    'At most',
    'The most containers this server may hold at once (its ceiling), even when the machine is idle.',
  ],
  [
    'Evicted',
    'Idle containers of this server stopped to make room for another server’s call, because this server held more than its fair share. A running call is never evicted.',
  ],
  [
    'From generic',
    'Containers taken over from the small generic pool: containers started in advance, bound to no server, that a pool adopts so a first call need not wait for a start.',
  ],
  [
    'Shape',
    'What a container is created with, also the end of its pool key: memory (MiB), CPU cores, most processes, runtime — 128m-0.5c-64p-runc is 128 MiB, half a core, 64 processes, runc (runsc is gVisor). Tools with different limits get pools of their own shape.',
  ],
];

/** The legend: a definition list under a heading that folds it. */
export function poolTermsLegend(): HTMLDetailsElement {
  return h(
    'details',
    { class: 'legend', open: true },
    h('summary', {}, 'What these figures mean'),
    h(
      'dl',
      { id: 'pool-terms' },
      TERMS.flatMap(([term, meaning]) => [h('dt', {}, term), h('dd', {}, meaning)]),
    ),
  );
}

/** `128m-0.5c-64p-runc` → "128 MiB · 0.5 CPU · 64 processes · runc"; another text as it is. */
export function describeShape(shape: string): string {
  const match = /^(\d+)m-([\d.]+)c-(\d+)p-(\w+)$/.exec(shape);
  if (!match) return shape;
  const [, memory, cpus, pids, runtime] = match;
  const engine = runtime === 'runsc' ? 'gVisor (runsc)' : runtime;
  return `${memory} MiB · ${cpus} CPU · ${pids} processes · ${engine}`;
}
