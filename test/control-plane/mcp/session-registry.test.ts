/**
 * Session quotas as pure logic (fake sessions, frozen clock): a full server
 * or caller makes room only from its own idle sessions, never from another
 * server's, and never from a session answering a request.
 */
import { describe, expect, it } from 'vitest';
import { SessionRegistry, type McpSession } from '../../../control-plane/mcp/session-registry.js';

interface FakeSession extends McpSession {
  closed: boolean;
}

let nextId = 0;
function open(
  registry: SessionRegistry,
  subdomain: string,
  quotaKey: string,
  running = 0,
): FakeSession {
  const admission = registry.admit(subdomain, quotaKey);
  const session: FakeSession = {
    id: `s${++nextId}`,
    subdomain,
    callerKey: quotaKey,
    quotaKey,
    lastUsed: 0,
    running,
    closed: false,
    close: async () => {
      session.closed = true;
    },
    notifyToolsChanged: () => undefined,
    notifyPromptsChanged: () => undefined,
    notifyResourcesChanged: () => undefined,
    notifyResourcesUpdated: () => undefined,
  };
  admission.add(session);
  return session;
}

function registry(limits: { total?: number; server?: number; caller?: number }) {
  const evicted: string[] = [];
  let now = 1000;
  const sessions = new SessionRegistry({
    idleMs: 60_000,
    maxSessions: limits.total ?? 100,
    maxPerServer: limits.server ?? 100,
    maxPerCaller: limits.caller ?? 100,
    onEvict: (session) => evicted.push(session.id),
    now: () => (now += 1),
  });
  return { sessions, evicted };
}

describe('SessionRegistry quotas', () => {
  it('never makes room with another server’s sessions (service cap)', () => {
    const { sessions } = registry({ total: 3 });
    const other = open(sessions, 'quiet', 'alice');
    open(sessions, 'public', 'ip1');
    open(sessions, 'public', 'ip2');
    // Full: a new session of "public" replaces an idle one of "public".
    for (let i = 0; i < 20; i += 1) open(sessions, 'public', `flood${i}`);
    expect(other.closed).toBe(false);
    expect(sessions.peek(other.id)).toBe(other);
    expect(sessions.size).toBe(3);
  });

  it('at the service cap, makes room only from a server holding more sessions', () => {
    const { sessions } = registry({ total: 4 });
    const flood = [1, 2, 3].map(() => open(sessions, 'public', 'ip1'));
    const quiet = open(sessions, 'quiet', 'alice', 1);
    // "quiet" (1 session, busy) needs a second: the flooded server gives an idle one.
    const quiet2 = open(sessions, 'quiet', 'alice', 1);
    expect(flood[0]!.closed).toBe(true);
    // Now 2 and 2: "public" may only replace its own sessions.
    const latest = open(sessions, 'public', 'ip1');
    expect(flood[1]!.closed).toBe(true);
    flood[2]!.running = 1;
    latest.running = 1;
    expect(() => sessions.admit('public', 'ip1')).toThrow(
      expect.objectContaining({ code: 'ERR_NO_CAPACITY' }),
    );
    expect([quiet.closed, quiet2.closed]).toEqual([false, false]);
  });

  it('makes room from the same caller first, then the same server', () => {
    const { sessions } = registry({ server: 3 });
    const alice = open(sessions, 'a', 'alice');
    const bob1 = open(sessions, 'a', 'bob');
    const bob2 = open(sessions, 'a', 'bob');
    open(sessions, 'a', 'bob');
    expect(bob1.closed).toBe(true);
    expect([alice.closed, bob2.closed]).toEqual([false, false]);
    open(sessions, 'a', 'carol');
    expect(alice.closed).toBe(true); // the least recently used idle one of the server
  });

  it('holds each caller to its own quota on a server', () => {
    const { sessions } = registry({ caller: 2 });
    const first = open(sessions, 'a', 'flood');
    open(sessions, 'a', 'flood');
    const onOtherServer = open(sessions, 'b', 'flood');
    const someoneElse = open(sessions, 'a', 'alice');
    open(sessions, 'a', 'flood');
    expect(first.closed).toBe(true);
    expect([onOtherServer.closed, someoneElse.closed]).toEqual([false, false]);
  });

  it('never evicts a session answering a request: refuses the new one instead', () => {
    const { sessions, evicted } = registry({ caller: 2, server: 3, total: 4 });
    const busy1 = open(sessions, 'a', 'flood', 1);
    const busy2 = open(sessions, 'a', 'flood', 1);
    expect(() => sessions.admit('a', 'flood')).toThrow(
      expect.objectContaining({ code: 'ERR_SESSION_QUOTA' }),
    );
    open(sessions, 'a', 'alice', 1);
    expect(() => sessions.admit('a', 'bob')).toThrow(
      expect.objectContaining({ code: 'ERR_SESSION_QUOTA' }),
    );
    open(sessions, 'b', 'carol', 1);
    expect(() => sessions.admit('c', 'dave')).toThrow(
      expect.objectContaining({ code: 'ERR_NO_CAPACITY' }),
    );
    expect(evicted).toEqual([]);
    expect([busy1.closed, busy2.closed]).toEqual([false, false]);
    // Once its call ends, a session may make room again.
    busy1.running = 0;
    open(sessions, 'a', 'flood');
    expect(busy1.closed).toBe(true);
  });

  it('counts admissions not yet filled, and gives back released ones', () => {
    const { sessions } = registry({ caller: 1 });
    const pending = sessions.admit('a', 'x');
    expect(() => sessions.admit('a', 'x')).toThrow(
      expect.objectContaining({ code: 'ERR_SESSION_QUOTA' }),
    );
    pending.release();
    pending.release(); // idempotent
    open(sessions, 'a', 'x');
  });

  it('does not sweep a session whose call outlives the idle time', () => {
    let now = 0;
    const sessions = new SessionRegistry({
      idleMs: 1000,
      maxSessions: 10,
      maxPerServer: 10,
      maxPerCaller: 10,
      now: () => now,
    });
    const admission = sessions.admit('a', 'x');
    const session: McpSession = {
      id: 'long',
      subdomain: 'a',
      callerKey: 'x',
      quotaKey: 'x',
      lastUsed: 0,
      running: 1,
      close: async () => undefined,
      notifyToolsChanged: () => undefined,
      notifyPromptsChanged: () => undefined,
      notifyResourcesChanged: () => undefined,
      notifyResourcesUpdated: () => undefined,
    };
    admission.add(session);
    now = 5000;
    sessions.sweep();
    expect(sessions.use('long')).toBe(session);
  });
});
