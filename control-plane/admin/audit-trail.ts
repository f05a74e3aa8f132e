/**
 * Writes audit entries for the admin side: who (the principal, or what an
 * anonymous sign-in claimed), when, from where (the client address the
 * listener assigned, honouring TRUSTED_PROXIES), under which request id, and
 * a summary without secrets. An entry that cannot be written is logged, not
 * answered: the change it describes has already happened.
 *
 * Refusals (403s, CSRF, throttled sign-ins, wrong bearers) go through one
 * path, `recordRefusal`: one entry per kind of refusal of an actor a minute,
 * whose `summary.count` is written when its minute ends (audit-refusals.ts),
 * so nobody can fill the log by being refused.
 */
import type { IncomingMessage } from 'node:http';
import { clientAddressFromHeaders, clientNetworkOf, requestIdOf } from '../http/index.js';
import type { Logger } from '../logger.js';
import type {
  AuditActor,
  AuditEntry,
  AuditEntryInput,
  AuditOutcome,
  Store,
} from '../store/index.js';
import { RefusalWindows, type RefusalWindow } from './audit-refusals.js';
import { auditSummaryOf } from './audit-summary.js';
import { auditActorOf, type Principal } from './permissions.js';

/** How often windows whose minute has ended get their counts written, in ms. */
const COUNT_SWEEP_MS = 5_000;
/** What an entry standing for an actor's further kinds of refusal says first. */
const OVERFLOW_NOTE =
  'more kinds of refusal in a minute than are recorded one by one; this entry counts the rest';

/** One thing to record. */
export interface AuditEvent {
  action: string;
  server?: string | null;
  target?: string | null;
  outcome: AuditOutcome;
  before?: unknown;
  after?: unknown;
  note?: string;
}

/** One refusal to record. */
export interface RefusalEvent {
  action: string;
  server?: string | null;
  target?: string | null;
  outcome: 'denied' | 'failed';
  /** The error code refused with: refusals of the same code are counted together. */
  reason: string;
  /** What the first of its minute said. */
  note: string;
}

/** Options of an AuditTrail (tests); defaults apply. */
export interface AuditTrailOptions {
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number;
}

export class AuditTrail {
  readonly #store: Store;
  readonly #log: Logger;
  readonly #refusals: RefusalWindows;
  readonly #sweep: NodeJS.Timeout;

  constructor(store: Store, log: Logger, options: AuditTrailOptions = {}) {
    this.#store = store;
    this.#log = log;
    this.#refusals = new RefusalWindows(options.now === undefined ? {} : { now: options.now });
    this.#sweep = setInterval(
      () => void this.#writeCounts(this.#refusals.takeClosed()),
      COUNT_SWEEP_MS,
    );
    this.#sweep.unref();
  }

  /**
   * Records `event` of `who` (a principal, or an actor for sign-ins) on `req`;
   * resolves false when the store refused it (the log says why).
   */
  async record(
    req: IncomingMessage,
    who: Principal | AuditActor,
    event: AuditEvent,
  ): Promise<boolean> {
    const summary: AuditEntryInput['summary'] = {};
    if (event.before !== undefined) summary.before = auditSummaryOf(event.before);
    if (event.after !== undefined) summary.after = auditSummaryOf(event.after);
    if (event.note !== undefined) summary.note = event.note;
    return (await this.#append(req, actorOf(who), { ...event, summary })) !== undefined;
  }

  /**
   * Records a refusal of `who` on `req`: the first of its kind in a minute is
   * an entry at once, the others of that minute are counted onto it.
   */
  async recordRefusal(
    req: IncomingMessage,
    who: Principal | AuditActor,
    event: RefusalEvent,
  ): Promise<void> {
    const actor = actorOf(who);
    // An anonymous caller is its network: one address each would be 2^64 actors on an IPv6 /64.
    const actorKey =
      actor.kind === 'anonymous'
        ? JSON.stringify(['anonymous', clientNetworkOf(clientAddressFromHeaders(req.headers))])
        : JSON.stringify([actor.kind, actor.id, actor.label]);
    const noted = this.#refusals.note(
      actorKey,
      JSON.stringify([event.action, event.server ?? null, event.reason]),
    );
    if (!noted.opened) return;
    const summary = {
      note: noted.overflow ? `${OVERFLOW_NOTE} (the first: ${event.note})` : event.note,
      count: 1,
    };
    // The further kinds are about any server: named by none, so no operator reads another's.
    const entry = await this.#append(req, actor, {
      action: event.action,
      server: noted.overflow ? null : (event.server ?? null),
      target: noted.overflow ? null : (event.target ?? null),
      outcome: event.outcome,
      summary,
    });
    if (entry !== undefined) {
      noted.window.entry = { id: entry.id, summary };
      noted.window.written = 1;
    }
  }

  /** Stops the sweep and writes the counts of every window still open. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    await this.#writeCounts(this.#refusals.takeAll());
  }

  async #append(
    req: IncomingMessage,
    actor: AuditActor,
    event: Pick<AuditEntryInput, 'action' | 'outcome' | 'summary'> & {
      server?: string | null;
      target?: string | null;
    },
  ): Promise<AuditEntry | undefined> {
    const entry: AuditEntryInput = {
      actor,
      action: event.action,
      server: event.server ?? null,
      target: event.target ?? null,
      outcome: event.outcome,
      clientAddress: clientAddressFromHeaders(req.headers) ?? null,
      requestId: requestIdOf(req),
      summary: event.summary,
    };
    try {
      return await this.#store.appendAudit(entry);
    } catch (error) {
      // The whole entry (its summary carries no secret): the log keeps what the store did not.
      this.#log.error({ err: error, entry }, 'an audit entry could not be written');
      return undefined;
    }
  }

  /** Writes the final count of each window onto its entry. */
  async #writeCounts(windows: RefusalWindow[]): Promise<void> {
    for (const window of windows) {
      const entry = window.entry;
      if (entry === undefined || window.count <= window.written) continue;
      try {
        await this.#store.setAuditSummary(entry.id, { ...entry.summary, count: window.count });
        window.written = window.count;
      } catch (error) {
        this.#log.error({ err: error }, 'the count of an audit entry could not be written');
      }
    }
  }
}

function actorOf(who: Principal | AuditActor): AuditActor {
  return 'role' in who ? auditActorOf(who) : who;
}
