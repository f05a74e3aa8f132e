/**
 * MCP sessions in the store, on SQLite and on PostgreSQL: rows, stream
 * events and relayed messages round-trip and are pruned by the store's
 * clock; on PostgreSQL two stores on one database stand for two replicas,
 * and every session signal reaches the other one — only if its write
 * committed, never the writer itself, and never as a configuration change.
 * Sessions are runtime state: backups leave them out.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type {
  McpStreamEventRow,
  SessionSignal,
  Store,
  StoreChange,
} from '../../control-plane/store/index.js';
import { postgresTarget, sqliteTarget, type StoreTarget } from './store-targets.js';

const MINUTE = 60_000;

for (const makeTarget of [sqliteTarget, postgresTarget]) {
  const target: StoreTarget = makeTarget();
  const replicated = target.dialect === 'postgres';

  describe(`MCP sessions on ${target.dialect}`, () => {
    let clockMs = Date.UTC(2030, 0, 1);
    const now = () => new Date(clockMs);
    const opened: Store[] = [];
    let store: Store;
    let counter = 0;
    /** An id unused so far in this file. */
    const fresh = (prefix: string) => `${prefix}-${++counter}`;

    async function open(options?: Parameters<StoreTarget['open']>[0]): Promise<Store> {
      const each = await target.open({ now, ...options });
      opened.push(each);
      return each;
    }

    function session(id: string, subdomain = 'alpha') {
      return { id, subdomain, callerKey: `caller-${id}`, quotaKey: `quota-${id}`, state: '{}' };
    }

    function event(
      sessionId: string,
      streamId: string,
      seq: number,
      final = false,
    ): McpStreamEventRow {
      const message =
        seq === 0
          ? ''
          : JSON.stringify({ jsonrpc: '2.0', method: 'notifications/x', params: { seq } });
      return { sessionId, streamId, seq, message, final };
    }

    beforeAll(async () => {
      await target.setup();
      store = await open();
    });
    afterAll(async () => {
      await Promise.all(opened.map((each) => each.close()));
      await target.teardown();
    });

    it('creates, reads, updates and deletes a session', async () => {
      const id = fresh('round-trip');
      await store.createMcpSession({ ...session(id), state: '{"logLevel":"info"}' });
      const stamp = now().toISOString();
      expect(await store.getMcpSession(id)).toEqual({
        id,
        subdomain: 'alpha',
        callerKey: `caller-${id}`,
        quotaKey: `quota-${id}`,
        state: '{"logLevel":"info"}',
        createdAt: stamp,
        lastUsedAt: stamp,
      });
      await expect(store.createMcpSession(session(id))).rejects.toMatchObject({
        code: 'ERR_CONFLICT',
      });

      expect(await store.updateMcpSessionState(id, '{"logLevel":"debug"}')).toBe(true);
      expect((await store.getMcpSession(id))?.state).toBe('{"logLevel":"debug"}');
      expect(await store.updateMcpSessionState('no-such-session', '{}')).toBe(false);

      await store.appendMcpStreamEvents([event(id, 's', 0), event(id, 's', 1)], false);
      expect(await store.deleteMcpSession(id)).toBe(true);
      expect(await store.getMcpSession(id)).toBeUndefined();
      expect(await store.readMcpStreamEvents(id, 's', -1, 10)).toEqual([]);
      expect(await store.deleteMcpSession(id)).toBe(false);
    });

    it('deletes every session of one server, with their events, and no other', async () => {
      const [first, second, other] = [fresh('of-a'), fresh('of-a'), fresh('of-b')];
      await store.createMcpSession(session(first, 'gone-server'));
      await store.createMcpSession(session(second, 'gone-server'));
      await store.createMcpSession(session(other, 'kept-server'));
      await store.appendMcpStreamEvents(
        [event(first, 's', 0), event(second, 's', 0), event(other, 's', 0)],
        false,
      );

      expect(await store.deleteMcpSessionsOf('gone-server')).toBe(2);
      expect(await store.getMcpSession(first)).toBeUndefined();
      expect(await store.getMcpSession(second)).toBeUndefined();
      expect(await store.readMcpStreamEvents(first, 's', -1, 10)).toEqual([]);
      expect(await store.getMcpSession(other)).toBeDefined();
      expect(await store.readMcpStreamEvents(other, 's', -1, 10)).toHaveLength(1);
      expect(await store.deleteMcpSessionsOf('gone-server')).toBe(0);
    });

    it('prunes sessions idle for longer than asked, counting from their last use', async () => {
      clockMs += 1;
      await store.pruneMcpSessions(0); // start from no sessions at all
      const [used, idle] = [fresh('used'), fresh('idle')];
      const created = now().toISOString();
      await store.createMcpSession(session(used));
      await store.createMcpSession(session(idle));
      await store.appendMcpStreamEvents([event(idle, 's', 0)], false);

      clockMs += 10 * MINUTE;
      await store.touchMcpSessions([]);
      // More ids than one statement takes, unknown ones among them.
      const many = Array.from({ length: 1200 }, (_, index) => `unknown-${index}`);
      await store.touchMcpSessions([...many, used]);
      expect(await store.getMcpSession(used)).toMatchObject({
        createdAt: created,
        lastUsedAt: now().toISOString(),
      });
      expect((await store.getMcpSession(idle))?.lastUsedAt).toBe(created);

      expect(await store.pruneMcpSessions(5 * MINUTE)).toBe(1);
      expect(await store.getMcpSession(idle)).toBeUndefined();
      expect(await store.readMcpStreamEvents(idle, 's', -1, 10)).toEqual([]);
      expect(await store.getMcpSession(used)).toBeDefined();

      clockMs += 4 * MINUTE;
      expect(await store.pruneMcpSessions(5 * MINUTE)).toBe(0);
      clockMs += 2 * MINUTE;
      expect(await store.pruneMcpSessions(5 * MINUTE)).toBe(1);
      expect(await store.getMcpSession(used)).toBeUndefined();
    });

    it('appends stream events and reads them after a seq, in order, up to a limit', async () => {
      const id = fresh('events');
      await store.createMcpSession(session(id));
      await store.appendMcpStreamEvents(
        [event(id, 'one', 0), event(id, 'one', 2), event(id, 'one', 1), event(id, 'two', 0)],
        true,
      );
      await store.appendMcpStreamEvents([event(id, 'one', 3, true)], false);

      const all = await store.readMcpStreamEvents(id, 'one', -1, 100);
      expect(all.map((each) => each.seq)).toEqual([0, 1, 2, 3]);
      expect(all[0]).toEqual({ sessionId: id, streamId: 'one', seq: 0, message: '', final: false });
      expect(all[3]).toEqual(event(id, 'one', 3, true));
      expect(JSON.parse(all[1]!.message)).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/x',
        params: { seq: 1 },
      });
      expect((await store.readMcpStreamEvents(id, 'one', 0, 2)).map((each) => each.seq)).toEqual([
        1, 2,
      ]);
      expect(await store.readMcpStreamEvents(id, 'one', 3, 10)).toEqual([]);
      expect(await store.readMcpStreamEvents(id, 'two', -1, 10)).toHaveLength(1);
      await expect(store.readMcpStreamEvents(id, 'one', 0, 0)).rejects.toBeInstanceOf(TypeError);
    });

    it('appends a batch whole or not at all, however large', async () => {
      const id = fresh('batch');
      const large = Array.from({ length: 1201 }, (_, seq) => event(id, 'big', seq));
      await store.appendMcpStreamEvents(large, true);
      const read = await store.readMcpStreamEvents(id, 'big', -1, 2000);
      expect(read.map((each) => each.seq)).toEqual(large.map((each) => each.seq));

      // seq 5 is taken: neither the new seq 2000 nor 2001 may be stored.
      for (const signal of [false, true]) {
        await expect(
          store.appendMcpStreamEvents(
            [event(id, 'big', 2000), event(id, 'big', 5), event(id, 'big', 2001)],
            signal,
          ),
        ).rejects.toMatchObject({ code: 'ERR_CONFLICT' });
        expect(await store.readMcpStreamEvents(id, 'big', 1200, 10)).toEqual([]);
      }
      await store.appendMcpStreamEvents([], true);
    });

    it('prunes whole streams whose newest event is older than asked', async () => {
      const id = fresh('prune-events');
      clockMs += 1;
      await store.pruneMcpStreamEvents(0); // start from no events at all
      await store.appendMcpStreamEvents([event(id, 'stale', 0), event(id, 'stale', 1)], false);
      await store.appendMcpStreamEvents([event(id, 'live', 0)], false);
      clockMs += 10 * MINUTE;
      await store.appendMcpStreamEvents([event(id, 'live', 1)], false);
      clockMs += 5 * MINUTE;

      expect(await store.pruneMcpStreamEvents(10 * MINUTE)).toBe(2);
      expect(await store.readMcpStreamEvents(id, 'stale', -1, 10)).toEqual([]);
      // The live stream keeps its old opening event too: a resume never finds half a stream.
      expect((await store.readMcpStreamEvents(id, 'live', -1, 10)).map((each) => each.seq)).toEqual(
        [0, 1],
      );
      expect(await store.pruneMcpStreamEvents(5 * MINUTE)).toBe(0);
      expect(await store.pruneMcpStreamEvents(5 * MINUTE - 1)).toBe(2);
      await expect(store.pruneMcpStreamEvents(-1)).rejects.toBeInstanceOf(TypeError);
    });

    it('relays a client message by ref, gives it once, and forgets an untaken one after a minute', async () => {
      const id = fresh('relay');
      const message = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { answer: 42 } });
      const refs = async () =>
        (await target.raw('SELECT id FROM mcp_session_messages WHERE session_id = ?', [id])).map(
          (row) => String(row.id),
        );
      await store.relayMcpSessionMessage(id, message);
      const [ref] = await refs();
      expect(ref).toBeDefined();
      expect(await store.takeMcpSessionMessage(ref!)).toEqual({ sessionId: id, message });
      // Taken: the row is gone at once, not kept for the prune.
      expect(await refs()).toEqual([]);
      expect(await store.takeMcpSessionMessage(ref!)).toBeUndefined();
      expect(await store.takeMcpSessionMessage('no-such-ref')).toBeUndefined();

      await store.relayMcpSessionMessage(id, message);
      const [untaken] = await refs();
      clockMs += 59_000;
      await store.pruneMcpSessions(24 * 60 * MINUTE);
      expect(await refs()).toEqual([untaken]);
      clockMs += 2_000;
      await store.pruneMcpSessions(24 * 60 * MINUTE);
      expect(await store.takeMcpSessionMessage(untaken!)).toBeUndefined();
    });

    it('leaves sessions out of backups, and a restore leaves them alone', async () => {
      const id = fresh('not-backed-up');
      await store.createMcpSession(session(id));
      await store.appendMcpStreamEvents([event(id, 's', 0)], false);
      await store.relayMcpSessionMessage(id, '{"jsonrpc":"2.0","id":1,"result":{}}');
      await store.createServer({ subdomain: 'backed-up' });

      const backup = await store.exportBackup();
      expect(Object.keys(backup.tables).filter((table) => table.startsWith('mcp_'))).toEqual([]);
      expect(JSON.stringify(backup)).not.toContain(id);
      expect(backup.migrations).toContain('0007-mcp-sessions');

      await store.importBackup(backup, { replace: true });
      expect(await store.getServer('backed-up')).toBeDefined();
      expect(await store.getMcpSession(id)).toBeDefined();
      expect(await store.readMcpStreamEvents(id, 's', -1, 10)).toHaveLength(1);
    });

    it('refuses a change channel too long to name its session channel', async () => {
      await expect(target.open({ changeChannel: 'c'.repeat(55) })).rejects.toBeInstanceOf(
        TypeError,
      );
    });

    it('announces no session write as a configuration change', async () => {
      const changes: StoreChange[] = [];
      const unsubscribe = store.onChange((change) => changes.push(change));
      const id = fresh('quiet');
      await store.createMcpSession(session(id));
      await store.updateMcpSessionState(id, '{"x":1}');
      await store.appendMcpStreamEvents([event(id, 's', 0)], true);
      await store.relayMcpSessionMessage(id, '{}');
      await store.touchMcpSessions([id]);
      await store.deleteMcpSession(id);
      // A configuration write after them: the first change heard must be it.
      await store.setMeta('after-sessions', 'yes');
      expect(changes).toEqual([{ subdomain: null, kind: 'meta' }]);
      unsubscribe();
    });

    if (!replicated) {
      it('delivers no signal on SQLite, to this store or another in the process', async () => {
        const other = await open();
        const heard: SessionSignal[] = [];
        store.onSessionSignal((signal) => heard.push(signal));
        other.onSessionSignal((signal) => heard.push(signal));
        const id = fresh('sqlite-quiet');
        await store.createMcpSession(session(id));
        await store.updateMcpSessionState(id, '{"y":2}');
        await store.appendMcpStreamEvents([event(id, 's', 0)], true);
        await store.relayMcpSessionMessage(id, '{}');
        await store.deleteMcpSession(id);
        // The other store sees the rows all the same (one database file).
        await other.relayMcpSessionMessage(id, '{}');
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(heard).toEqual([]);
      });
    }
  });

  if (replicated) {
    describe('MCP session signals between two replicas on PostgreSQL', () => {
      // The longest channel allowed: its session channel is exactly 63 characters.
      const changeChannel = `mcphost_${'x'.repeat(46)}`;
      const sessionChannel = `${changeChannel}_sessions`;
      const signalTarget = postgresTarget();
      let clockMs = Date.UTC(2031, 0, 1);
      const now = () => new Date(clockMs);
      let writer: Store;
      let reader: Store;
      const writerHeard: SessionSignal[] = [];
      const readerHeard: SessionSignal[] = [];
      const readerChanges: StoreChange[] = [];
      const readerLog: string[] = [];
      let sentinels = 0;

      /**
       * The reader sends a signal the writer hears: once it arrives, every
       * signal committed before it — the writer's own included — would have
       * arrived too (PostgreSQL delivers in commit order).
       */
      async function settle(): Promise<void> {
        const id = `sentinel-${++sentinels}`;
        await reader.createMcpSession({
          id,
          subdomain: 'sentinel',
          callerKey: 'c',
          quotaKey: 'q',
          state: '{}',
        });
        const expected = { kind: 'changed', session: id };
        await reader.updateMcpSessionState(id, '{}');
        await vi.waitFor(() => expect(writerHeard).toContainEqual(expected), { timeout: 5000 });
        // The writer's own-store check: only the sentinels, never its own writes.
        expect(writerHeard.every((signal) => signal.kind === 'changed')).toBe(true);
      }

      beforeAll(async () => {
        await signalTarget.setup();
        writer = await signalTarget.open({ now, changeChannel });
        reader = await signalTarget.open({
          now,
          changeChannel,
          log: (line) => readerLog.push(line),
        });
        writer.onSessionSignal((signal) => writerHeard.push(signal));
        reader.onSessionSignal((signal) => readerHeard.push(signal));
        reader.onChange((change) => readerChanges.push(change));
      });
      afterAll(async () => {
        await writer?.close();
        await reader?.close();
        await signalTarget.teardown();
      });

      it('sends each kind to the other replica, never to the writer', async () => {
        const base = {
          subdomain: 'signalled',
          callerKey: 'c',
          quotaKey: 'q',
          state: '{}',
        };
        for (const id of ['s1', 's2', 's3', 's4']) await writer.createMcpSession({ ...base, id });
        await writer.updateMcpSessionState('s1', '{"logLevel":"debug"}');
        await writer.updateMcpSessionState('missing', '{}'); // no row: nothing to say
        await writer.appendMcpStreamEvents(
          [
            { sessionId: 's1', streamId: 'a', seq: 0, message: '', final: false },
            { sessionId: 's1', streamId: 'a', seq: 1, message: '{}', final: false },
            { sessionId: 's1', streamId: 'b', seq: 0, message: '', final: false },
          ],
          true,
        );
        await writer.appendMcpStreamEvents(
          [{ sessionId: 's1', streamId: 'c', seq: 0, message: '', final: false }],
          false,
        );
        await writer.relayMcpSessionMessage('s1', '{"jsonrpc":"2.0","id":3,"result":{}}');
        await writer.touchMcpSessions(['s1', 's2']);
        await writer.deleteMcpSession('s1');
        await writer.deleteMcpSession('s1'); // already gone: nothing to say
        clockMs += MINUTE;
        await writer.touchMcpSessions(['s2', 's3']);
        expect(await writer.pruneMcpSessions(MINUTE / 2)).toBe(1); // s4
        expect(await writer.deleteMcpSessionsOf('signalled')).toBe(2);

        await settle();
        const relayed = readerHeard.find((signal) => signal.kind === 'message');
        expect(readerHeard).toEqual([
          { kind: 'changed', session: 's1' },
          { kind: 'events', session: 's1', stream: 'a' },
          { kind: 'events', session: 's1', stream: 'b' },
          { kind: 'message', session: 's1', ref: expect.any(String) },
          { kind: 'ended', session: 's1' },
          { kind: 'ended', session: 's4' },
          expect.objectContaining({ kind: 'ended' }),
          expect.objectContaining({ kind: 'ended' }),
        ]);
        expect(
          readerHeard
            .slice(-2)
            .map((signal) => (signal.kind === 'ended' ? signal.session : ''))
            .sort(),
        ).toEqual(['s2', 's3']);
        // The receiving replica reads the relayed message by the ref it heard.
        expect(
          relayed?.kind === 'message' && (await reader.takeMcpSessionMessage(relayed.ref)),
        ).toEqual({ sessionId: 's1', message: '{"jsonrpc":"2.0","id":3,"result":{}}' });
        expect(readerChanges).toEqual([]);
      });

      it('sends nothing for a write that does not commit', async () => {
        readerHeard.length = 0;
        await writer.createMcpSession({
          id: 'doomed',
          subdomain: 'x',
          callerKey: 'c',
          quotaKey: 'q',
          state: '{}',
        });
        // Fails at COMMIT, after the NOTIFY was issued inside the transaction.
        await signalTarget.raw(`CREATE FUNCTION refuse_at_commit() RETURNS trigger AS $$
          BEGIN IF NEW.state = 'explode' THEN RAISE EXCEPTION 'planted failure'; END IF; RETURN NEW; END
          $$ LANGUAGE plpgsql`);
        await signalTarget.raw(`CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER UPDATE ON mcp_sessions
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit()`);
        await expect(writer.updateMcpSessionState('doomed', 'explode')).rejects.toMatchObject({
          code: 'ERR_STORE',
        });
        expect((await writer.getMcpSession('doomed'))?.state).toBe('{}');
        await expect(writer.updateMcpSessionState('doomed', '{"ok":true}')).resolves.toBe(true);

        await settle();
        expect(readerHeard).toEqual([{ kind: 'changed', session: 'doomed' }]);
      });

      it('ignores a malformed payload on the session channel, and logs it', async () => {
        readerHeard.length = 0;
        for (const payload of [
          'not json',
          '{"origin":"elsewhere","signal":{"kind":"exploded","session":"s"}}',
          '{"origin":"elsewhere","signal":{"kind":"events","session":"s"}}',
        ]) {
          await signalTarget.raw('SELECT pg_notify(?, ?)', [sessionChannel, payload]);
        }
        await signalTarget.raw('SELECT pg_notify(?, ?)', [
          sessionChannel,
          '{"origin":"elsewhere","signal":{"kind":"ended","session":"s"}}',
        ]);
        await vi.waitFor(() => expect(readerHeard).toEqual([{ kind: 'ended', session: 's' }]), {
          timeout: 5000,
        });
        expect(readerLog.filter((line) => line.includes('malformed session signal'))).toHaveLength(
          3,
        );
        expect(readerChanges).toEqual([]);
      });

      it('tells session listeners to resync after the listener reconnects, then hears again', async () => {
        readerHeard.length = 0;
        const [database] = await signalTarget.raw('SELECT current_database() AS name');
        const terminated = await signalTarget.raw(
          `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
           WHERE datname = ? AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
          [database?.name],
        );
        expect(terminated).toHaveLength(2); // one listener connection per store
        await vi.waitFor(() => expect(readerHeard).toContainEqual({ kind: 'resync' }), {
          timeout: 10_000,
        });
        await vi.waitFor(() => expect(writerHeard).toContainEqual({ kind: 'resync' }), {
          timeout: 10_000,
        });
        await vi.waitFor(
          () => expect(readerChanges).toContainEqual({ subdomain: null, kind: 'resync' }),
          { timeout: 10_000 },
        );

        await writer.relayMcpSessionMessage('after-reconnect', '{}');
        await vi.waitFor(
          () =>
            expect(readerHeard).toContainEqual({
              kind: 'message',
              session: 'after-reconnect',
              ref: expect.any(String),
            }),
          { timeout: 5000 },
        );
      });
    });
  }
}
