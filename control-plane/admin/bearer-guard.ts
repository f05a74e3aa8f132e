/**
 * Wrong admin bearers are guesses — at the admin token, a personal token
 * (`mcph_pat_…`) or the metrics token — and are braked like password
 * guesses: each client network (an IPv4 address, an IPv6 /64) may send
 * SIGN_IN_ATTEMPTS_PER_MINUTE wrong ones a minute (the sign-in throttle's
 * kind, an allowance of their own: a mistyped password does not stop a
 * script's token, nor the reverse). Past it, every request of
 * that network carrying a bearer is refused 429 ERR_SIGN_IN_THROTTLED with
 * Retry-After before its token is looked at (the answer held back a
 * while, so a guesser waiting for each slows down): the right token too, or
 * 429 against 401 would still answer guesses. A right bearer spends nothing, so a
 * script using its token all day is never throttled, and a network flooding
 * wrong ones does not hold up anyone else's. Both the wrong bearers and the
 * refusals are audited as `sign-in.token` failures, one entry per network
 * and kind a minute with its count.
 *
 * A session cookie that no longer works is not a guess (a dashboard left
 * open past its idle time sends one on every poll): not counted.
 */
import type { IncomingMessage } from 'node:http';
import type { AddressThrottle } from '../identity/index.js';
import { isMcphostError, McphostError } from '../errors.js';
import { clientAddressFromHeaders, clientNetworkOf } from '../http/index.js';
import type { AuditActor } from '../store/index.js';
import type { AuditTrail } from './audit-trail.js';

/** The audit action of a wrong or refused bearer. */
const ACTION = 'sign-in.token';

/** What the guard needs. */
export interface BearerGuardOptions {
  /** The per-network allowance of wrong bearers. */
  throttle: AddressThrottle;
  audit: AuditTrail;
  /** Counts a refused request by reason (`throttled` here). */
  onAuthFailure(reason: string): void;
}

/** Runs a credential check under the network's allowance of wrong bearers. */
export type BearerGuard = <T>(req: IncomingMessage, check: () => Promise<T>) => Promise<T>;

/**
 * A guard: `check` (which throws ERR_UNAUTHORIZED for a wrong credential)
 * runs only while the request's network is within its allowance, and a
 * wrong bearer is counted against it. Requests without an Authorization
 * header pass straight through.
 */
export function bearerGuard(options: BearerGuardOptions): BearerGuard {
  const { throttle, audit } = options;
  return async (req, check) => {
    if (req.headers.authorization === undefined) return check();
    const address = clientAddressFromHeaders(req.headers);
    const network = clientNetworkOf(address);
    const actor: AuditActor = { kind: 'anonymous', id: null, label: address ?? 'unknown' };
    const allowance = throttle.check(network);
    if (!allowance.allowed) {
      options.onAuthFailure('throttled');
      const error = new McphostError(
        'ERR_SIGN_IN_THROTTLED',
        `too many wrong tokens or sign-ins from this network: try again in ${allowance.retryAfterSeconds} s`,
        { details: { retryAfterSeconds: allowance.retryAfterSeconds } },
      );
      await audit.recordRefusal(req, actor, {
        action: ACTION,
        outcome: 'failed',
        reason: error.code,
        note: 'too many attempts from this network',
      });
      throw error;
    }
    try {
      return await check();
    } catch (error) {
      if (isMcphostError(error, 'ERR_UNAUTHORIZED')) {
        throttle.take(network);
        await audit.recordRefusal(req, actor, {
          action: ACTION,
          outcome: 'failed',
          reason: error.code,
          note: error.message,
        });
      }
      throw error;
    }
  };
}
