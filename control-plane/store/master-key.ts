/**
 * Where the key that encrypts secrets comes from: the configuration
 * (`MASTER_KEY`, base64 or hex of 32 bytes), else `<dataDir>/master.key`, else a
 * freshly generated key written there (mode 0600) with a loud warning, since
 * losing that file makes every stored secret unreadable.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { McphostError } from '../errors.js';
import { MASTER_KEY_BYTES } from './secret-cipher.js';

/** File name of the generated master key inside the data directory. */
export const MASTER_KEY_FILE_NAME = 'master.key';

/** Options of `loadMasterKey`. */
export interface LoadMasterKeyOptions {
  /** The configured key (base64 or hex of 32 bytes); unset or empty → the key file. */
  configured?: string;
  /** Directory of the key file. */
  dataDir: string;
  /** Receives the warning printed when a key is generated. */
  warn: (message: string) => void;
}

/** Returns the 32-byte master key, generating and saving one on first start. */
export function loadMasterKey(options: LoadMasterKeyOptions): Buffer {
  const configured = options.configured?.trim();
  if (configured !== undefined && configured !== '') {
    return parseMasterKey(configured, 'MASTER_KEY');
  }
  const file = path.join(options.dataDir, MASTER_KEY_FILE_NAME);
  const existing = readKeyFile(file);
  if (existing !== undefined) return parseMasterKey(existing, file);

  const key = randomBytes(MASTER_KEY_BYTES);
  try {
    mkdirSync(options.dataDir, { recursive: true });
    // 'wx' refuses to overwrite a key another process wrote in the meantime.
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600); // the umask may have narrowed or widened the mode
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      return parseMasterKey(readKeyFile(file) ?? '', file);
    }
    throw new McphostError(
      'ERR_CONFIG',
      `cannot write the master key to ${file}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  options.warn(
    `WARNING: secrets are encrypted with a key generated into ${file}; back it up or set MASTER_KEY ` +
      '(losing it makes every stored secret unreadable)',
  );
  return key;
}

/** Decodes a 32-byte key given as 64 hex digits or as base64; anything else is ERR_CONFIG. */
export function parseMasterKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)
      ? Buffer.from(trimmed, 'base64')
      : undefined;
  if (key === undefined || key.length !== MASTER_KEY_BYTES) {
    throw new McphostError(
      'ERR_CONFIG',
      `${source} must be ${MASTER_KEY_BYTES} bytes written as base64 or 64 hex digits`,
    );
  }
  return key;
}

function readKeyFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new McphostError(
      'ERR_CONFIG',
      `cannot read the master key ${file}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}
