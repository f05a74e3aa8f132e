/**
 * The credential of a stream (pure logic, frozen clock): which credential an
 * admitted request carries, and CredentialExpiry — it ends once, at the
 * latest end it was given, waits past what one Node timer can, and a
 * credential with no end waits for nothing.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CredentialExpiry,
  streamCredentialOf,
} from '../../../control-plane/mcp/stream-credential.js';

describe('streamCredentialOf', () => {
  it('keeps an API key’s id and any end; an anonymous caller has no credential', () => {
    const end = new Date('2030-01-01T00:00:00Z');
    expect(
      streamCredentialOf({ caller: { kind: 'apikey', keyId: 'k1', label: 'l' }, expiresAt: end }),
    ).toEqual({ keyId: 'k1', expiresAt: end.getTime() });
    expect(streamCredentialOf({ caller: { kind: 'apikey', keyId: 'k1', label: 'l' } })).toEqual({
      keyId: 'k1',
    });
    expect(streamCredentialOf({ caller: { kind: 'oauth', subject: 's' }, expiresAt: end })).toEqual(
      { expiresAt: end.getTime() },
    );
    expect(streamCredentialOf({ caller: { kind: 'anonymous' } })).toBeUndefined();
  });
});

describe('CredentialExpiry', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('ends once at the end, and a later end moves it on, an earlier one does not', () => {
    const ended = vi.fn();
    const expiry = new CredentialExpiry(ended);
    expiry.extend(Date.now() + 1_000);
    expiry.extend(Date.now() + 500);
    vi.advanceTimersByTime(900);
    expiry.extend(Date.now() + 1_000);
    vi.advanceTimersByTime(900);
    expect(ended).not.toHaveBeenCalled();
    vi.advanceTimersByTime(200);
    expect(ended).toHaveBeenCalledTimes(1);
    expiry.extend(Date.now() + 10);
    vi.advanceTimersByTime(1_000);
    expect(ended).toHaveBeenCalledTimes(1);
  });

  it('waits past the longest timer without ending early', () => {
    const ended = vi.fn();
    const expiry = new CredentialExpiry(ended);
    const fortyDays = 40 * 24 * 3_600_000;
    expiry.extend(Date.now() + fortyDays);
    vi.advanceTimersByTime(fortyDays - 1_000);
    expect(ended).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1_000);
    expect(ended).toHaveBeenCalledTimes(1);
  });

  it('ends on the next turn when the end has passed, and not at all once cancelled or endless', () => {
    const ended = vi.fn();
    new CredentialExpiry(ended).extend(Date.now() - 1);
    expect(ended).not.toHaveBeenCalled();
    vi.advanceTimersByTime(0);
    expect(ended).toHaveBeenCalledTimes(1);

    const cancelled = vi.fn();
    const expiry = new CredentialExpiry(cancelled);
    expiry.extend(Date.now() + 100);
    expiry.cancel();
    const endless = vi.fn();
    const keyWithoutEnd = new CredentialExpiry(endless);
    keyWithoutEnd.extend(undefined);
    vi.advanceTimersByTime(10_000);
    expect(cancelled).not.toHaveBeenCalled();
    expect(endless).not.toHaveBeenCalled();
  });
});
