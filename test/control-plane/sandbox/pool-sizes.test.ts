/**
 * PUT /api/pools validates a size once, completely, before anything is
 * written: a refused size leaves the store and GET /api/pools as they were —
 * including when POOL_MAX_SIZE_CAP is above POOL_MAX_TOTAL. A size saved
 * under other caps does not stop a later start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const dataDir = mkdtempSync(join(tmpdir(), 'mcphost-pool-sizes-'));
const BASE_ENV = { DATA_DIR: dataDir, GENERIC_POOL_SIZE: '0', POOL_MIN_WARM: '0' };
// A pool may be sized up to 16 containers, but only 4 run in all.
const CAPS = { POOL_MAX_SIZE: '2', POOL_MAX_SIZE_CAP: '16', POOL_MAX_TOTAL: '4' };

let plane: TestControlPlane | undefined;

/** The sizes GET /api/pools reports, in a stable order. */
async function sizes(from: TestControlPlane): Promise<unknown[]> {
  const { status, body } = await from.admin('GET', '/api/pools');
  expect(status).toBe(200);
  return [...(body.sizes as { unit: string }[])].sort((a, b) => a.unit.localeCompare(b.unit));
}

beforeAll(async () => {
  plane = await startTestControlPlane({ ...BASE_ENV, ...CAPS });
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'sized' })).status).toBe(201);
  const tool = { description: 'One.', parameters: [], code: 'return 1;' };
  expect((await plane.admin('PUT', '/api/servers/sized/tools/one', tool)).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await plane?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('PUT /api/pools', () => {
  it('refuses a size that does not fit and changes nothing, in the store or in GET /api/pools', async () => {
    const admin = plane!;
    expect((await admin.admin('PUT', '/api/pools/sized', { minWarm: 1, maxSize: 3 })).status).toBe(
      200,
    );
    expect(
      (await admin.admin('PUT', '/api/pools/sized/one', { minWarm: 0, maxSize: 2 })).status,
    ).toBe(200);
    const before = await sizes(admin);
    expect(before).toEqual([
      { unit: 'sized', minWarm: 1, maxSize: 3 },
      { unit: 'sized/one', minWarm: 0, maxSize: 2 },
    ]);

    const refused: [path: string, body: unknown, status: number, message: RegExp][] = [
      // maxSize within POOL_MAX_SIZE_CAP, minWarm over POOL_MAX_TOTAL: the case that used to be saved.
      [
        '/api/pools/sized',
        { minWarm: 6, maxSize: 10 },
        400,
        /^pool sized: minWarm 6 is over the limit of 4 containers in all$/,
      ],
      [
        '/api/pools/sized/one',
        { minWarm: 5, maxSize: 5 },
        400,
        /^pool sized\/one: minWarm 5 is over the limit of 4/,
      ],
      ['/api/pools/sized', { minWarm: 0, maxSize: 17 }, 400, /over the cap of 16 containers/],
      ['/api/pools/sized', { minWarm: 3, maxSize: 2 }, 400, /minWarm must not exceed maxSize/],
      ['/api/pools/sized', { minWarm: -1, maxSize: 2 }, 400, /^invalid pool settings of sized: /],
      ['/api/pools/sized', { minWarm: 1, maxSize: 3, extra: true }, 400, /extra/],
      // Checked before the tool is looked up: bad input is refused whatever it names.
      ['/api/pools/sized/nope', { minWarm: 6, maxSize: 10 }, 400, /over the limit of 4/],
      ['/api/pools/sized/nope', { minWarm: 0, maxSize: 1 }, 404, /does not exist/],
      ['/api/pools/nobody', { minWarm: 0, maxSize: 1 }, 404, /nobody/],
    ];
    for (const [path, body, status, message] of refused) {
      const answer = await admin.admin('PUT', path, body);
      expect({ path, body, status: answer.status }).toEqual({ path, body, status });
      expect(answer.body.error.message).toMatch(message);
      expect(await sizes(admin)).toEqual(before);
    }

    // What a new start reads from the store is what was there before the refusals.
    await admin.restart();
    expect(await sizes(admin)).toEqual(before);
  });

  it('starts even when a saved size does not fit its caps; that unit keeps the default size', async () => {
    await plane!.close();
    plane = undefined;
    const lines: string[] = [];
    // Another replica (or a lowered setting) with a smaller budget, on the same store.
    plane = await startTestControlPlane(
      {
        ...BASE_ENV,
        POOL_MAX_SIZE: '2',
        POOL_MAX_SIZE_CAP: '2',
        POOL_MAX_TOTAL: '2',
        LOG_LEVEL: 'warn',
      },
      { logSink: (line) => lines.push(line) },
    );
    // sized (maxSize 3) is over this plane's cap of 2; sized/one (maxSize 2) fits.
    expect(await sizes(plane)).toEqual([{ unit: 'sized/one', minWarm: 0, maxSize: 2 }]);
    const warning = lines.map((line) => JSON.parse(line)).find((entry) => entry.unit === 'sized');
    expect(warning).toMatchObject({
      msg: expect.stringContaining('saved pool size does not fit'),
      reason: 'pool sized: maxSize 3 is over the cap of 2 containers per pool',
    });
  });
});
