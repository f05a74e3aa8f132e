/** Where the master key comes from, and what a generated one looks like on disk. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMasterKey } from '../../control-plane/store/index.js';

const directories: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcphost-key-test-'));
  directories.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('loadMasterKey', () => {
  it('generates a key into a fresh data directory with mode 0600 and warns loudly', () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    const warnings: string[] = [];
    const key = loadMasterKey({ dataDir, warn: (message) => warnings.push(message) });
    expect(key).toHaveLength(32);
    const file = path.join(dataDir, 'master.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').equals(key)).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`secrets are encrypted with a key generated into ${file}`);
    expect(warnings[0]).toContain('MASTER_KEY');
  });

  it('reads the same key back on the next start without warning', () => {
    const dataDir = tempDir();
    const first = loadMasterKey({ dataDir, warn: () => undefined });
    const warnings: string[] = [];
    const second = loadMasterKey({ dataDir, warn: (message) => warnings.push(message) });
    expect(second.equals(first)).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('prefers the configured key, as hex or base64', () => {
    const dataDir = tempDir();
    const bytes = Buffer.alloc(32, 0xab);
    const warn = () => {
      throw new Error('must not warn');
    };
    expect(loadMasterKey({ configured: bytes.toString('hex'), dataDir, warn }).equals(bytes)).toBe(
      true,
    );
    expect(
      loadMasterKey({ configured: bytes.toString('base64'), dataDir, warn }).equals(bytes),
    ).toBe(true);
    expect(() => statSync(path.join(dataDir, 'master.key'))).toThrow();
  });

  it('refuses a configured key of the wrong length with ERR_CONFIG', () => {
    expect(() =>
      loadMasterKey({
        configured: Buffer.alloc(16).toString('base64'),
        dataDir: tempDir(),
        warn: () => undefined,
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'ERR_CONFIG',
        message: expect.stringContaining('MASTER_KEY must be 32 bytes'),
      }),
    );
  });

  it('refuses a damaged key file with ERR_CONFIG instead of replacing it', () => {
    const dataDir = tempDir();
    writeFileSync(path.join(dataDir, 'master.key'), 'not a key!');
    expect(() => loadMasterKey({ dataDir, warn: () => undefined })).toThrow(
      expect.objectContaining({ code: 'ERR_CONFIG' }),
    );
    expect(readFileSync(path.join(dataDir, 'master.key'), 'utf8')).toBe('not a key!');
  });
});
