/**
 * A reopened store serves every cached tool, and the figures worth knowing are
 * printed: how long the embedded store takes to open (fresh and existing) and
 * a cached tool lookup on the hot path. Speed is not asserted in tests.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigCache } from '../../control-plane/store/index.js';
import { sampleTool, sqliteTarget } from './store-targets.js';

describe('store performance (SQLite)', () => {
  const target = sqliteTarget();
  afterAll(() => target.teardown());

  it('reopens and serves every tool from the cache', async () => {
    let started = performance.now();
    const fresh = await target.open();
    const freshOpenMs = performance.now() - started;
    for (let server = 0; server < 20; server++) {
      await fresh.createServer({ subdomain: `perf-${server}` });
      for (let tool = 0; tool < 10; tool++)
        await fresh.saveTool(`perf-${server}`, `tool-${tool}`, sampleTool());
      await fresh.putSecret(`perf-${server}`, 'API_KEY', 'value');
    }
    await fresh.close();

    started = performance.now();
    const store = await target.open();
    const reopenMs = performance.now() - started;
    started = performance.now();
    const cache = new ConfigCache(store);
    await cache.start();
    const cacheStartMs = performance.now() - started;

    const lookups = 1_000_000;
    let found = 0;
    started = performance.now();
    for (let index = 0; index < lookups; index++) {
      if (cache.tool(`perf-${index % 20}`, `tool-${index % 10}`) !== undefined) found++;
    }
    const lookupNs = ((performance.now() - started) * 1e6) / lookups;
    expect(found).toBe(lookups);

    console.log(
      `[store perf] SQLite open: fresh ${freshOpenMs.toFixed(1)} ms, existing ${reopenMs.toFixed(1)} ms; ` +
        `cache start (20 servers × 10 tools + secrets) ${cacheStartMs.toFixed(1)} ms; ` +
        `cached tool lookup ${lookupNs.toFixed(0)} ns`,
    );
    cache.stop();
    await store.close();
  });
});
