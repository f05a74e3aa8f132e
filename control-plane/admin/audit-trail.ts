/**
 * Writes audit entries for the admin side: who (the principal, or what an
 * anonymous sign-in claimed), when, from where (the client address the
 * listener assigned, honouring TRUSTED_PROXIES), under which request id, and
 * a summary without secrets. An entry that cannot be written is logged, not
 * answered: the change it describes has already happened.
 */
import type { IncomingMessage } from 'node:http';
import { clientAddressFromHeaders, requestIdOf } from '../http/index.js';
import type { Logger } from '../logger.js';
import type { AuditActor, AuditOutcome, Store } from '../store/index.js';
import { auditSummaryOf } from './audit-summary.js';
import { auditActorOf, type Principal } from './permissions.js';

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

export class AuditTrail {
  readonly #store: Store;
  readonly #log: Logger;

  constructor(store: Store, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  /** Records `event` of `who` (a principal, or an actor for sign-ins) on `req`. */
  async record(
    req: IncomingMessage,
    who: Principal | AuditActor,
    event: AuditEvent,
  ): Promise<void> {
    const actor = 'role' in who ? auditActorOf(who) : who;
    const summary: { before?: unknown; after?: unknown; note?: string } = {};
    if (event.before !== undefined) summary.before = auditSummaryOf(event.before);
    if (event.after !== undefined) summary.after = auditSummaryOf(event.after);
    if (event.note !== undefined) summary.note = event.note;
    try {
      await this.#store.appendAudit({
        actor,
        action: event.action,
        server: event.server ?? null,
        target: event.target ?? null,
        outcome: event.outcome,
        clientAddress: clientAddressFromHeaders(req.headers) ?? null,
        requestId: requestIdOf(req),
        summary,
      });
    } catch (error) {
      this.#log.error({ err: error, action: event.action }, 'an audit entry could not be written');
    }
  }
}
