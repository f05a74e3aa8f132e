/**
 * RunnerSocket on the host alone (no container): the directory's and the
 * socket's modes, one connection and no second, removal on close, stale
 * groups removed, and the root's checks. The container's side is in
 * socket-data-path.test.ts.
 */
import { connect } from 'node:net';
import { chmod, mkdtemp, mkdir, readdir, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MAX_SOCKET_ROOT_BYTES,
  prepareSocketRoot,
  removeSocketGroups,
  RUNNER_SOCKET_TARGET,
  RunnerSocket,
} from '../../control-plane/sandbox/docker/runner-socket.js';

let root: string;
const GROUP = 'a1b2c3d4e5f6';

beforeEach(async () => {
  root = path.join(await mkdtemp(path.join(tmpdir(), 'mcphost-sock-')), 'run');
  await prepareSocketRoot(root);
});

afterEach(async () => {
  await rm(path.dirname(root), { recursive: true, force: true });
});

function dial(socketPath: string): Promise<'connected' | string> {
  return new Promise((resolve) => {
    const client = connect({ path: socketPath });
    client.once('connect', () => {
      resolve('connected');
      client.destroy();
    });
    client.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('RunnerSocket', () => {
  it('makes the root 0700, the directory 0711 and the socket writable by all', async () => {
    const socket = await RunnerSocket.open(root, GROUP);
    try {
      expect((await stat(root)).mode & 0o777).toBe(0o700);
      expect((await stat(path.join(root, GROUP))).mode & 0o777).toBe(0o700);
      expect((await stat(socket.hostDir)).mode & 0o777).toBe(0o711);
      const socketStat = await stat(path.join(socket.hostDir, 's'));
      expect(socketStat.isSocket()).toBe(true);
      expect(socketStat.mode & 0o777).toBe(0o777);
      expect(socket.channel()).toEqual({
        mount: {
          Type: 'bind',
          Source: socket.hostDir,
          Target: RUNNER_SOCKET_TARGET,
          ReadOnly: true,
        },
        argument: '--channel=/run/mcphost/s',
      });
    } finally {
      await socket.close();
    }
  });

  it('takes one connection; the name is gone after it, so nothing else connects', async () => {
    const socket = await RunnerSocket.open(root, GROUP);
    try {
      const socketPath = path.join(socket.hostDir, 's');
      const accepted = socket.connection;
      expect(await dial(socketPath)).toBe('connected');
      await accepted;
      expect(await dial(socketPath)).toBe('ENOENT');
    } finally {
      await socket.close();
    }
  });

  it('removes its directory on close and rejects a connection that never came', async () => {
    const socket = await RunnerSocket.open(root, GROUP);
    await socket.close();
    await expect(socket.connection).rejects.toThrow(/closed before the harness connected/);
    expect(await readdir(path.join(root, GROUP))).toEqual([]);
    await socket.close(); // idempotent
  });

  it('removes the groups it is told are stale, and keeps the rest', async () => {
    await mkdir(path.join(root, 'aaaaaaaaaaaa'));
    await mkdir(path.join(root, 'bbbbbbbbbbbb'));
    expect(await removeSocketGroups(root, (group) => group === 'bbbbbbbbbbbb')).toBe(1);
    expect(await readdir(root)).toEqual(['bbbbbbbbbbbb']);
  });

  it('takes an existing root only when it is a directory of its own that no one else may enter', async () => {
    const parent = path.dirname(root);
    const open = path.join(parent, 'open');
    await mkdir(open, { mode: 0o755 });
    await chmod(open, 0o755);
    await expect(prepareSocketRoot(open)).rejects.toThrow(/may be entered by other users/);
    // Nothing existing is changed.
    expect((await stat(open)).mode & 0o777).toBe(0o755);
    const link = path.join(parent, 'link');
    await symlink(root, link);
    await expect(prepareSocketRoot(link)).rejects.toThrow(/not a directory/);
    await chmod(open, 0o700);
    await expect(prepareSocketRoot(open)).resolves.toBeUndefined();
  });

  it('refuses a relative or too long root, and a malformed group', async () => {
    await expect(prepareSocketRoot('run/mcphost')).rejects.toThrow(/absolute/);
    await expect(prepareSocketRoot(`/${'x'.repeat(MAX_SOCKET_ROOT_BYTES)}`)).rejects.toThrow(
      /longer than/,
    );
    await expect(RunnerSocket.open(root, '../escape')).rejects.toThrow(/group must be/);
  });
});
