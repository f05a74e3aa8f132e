/**
 * Who owns a runner container, and whether that control plane still runs:
 * the rule that keeps two control planes sharing a plane name on one engine
 * from removing each other's runners (the reaping itself is asserted against
 * a real engine in test/sandbox-drivers/docker-sandbox.test.ts).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  containerIdFromMountinfo,
  ownerLabels,
  ownerLiveness,
  rootFilesystemMatches,
  type PlaneOwner,
} from '../../control-plane/sandbox/docker/plane-owner.js';

const ID_A = 'a'.repeat(64);
const ID_B = 'b'.repeat(64);

describe('containerIdFromMountinfo', () => {
  it('finds the id in the engine bind mount of /etc/hostname, and nothing on a host', () => {
    const inContainer = [
      '1021 1012 0:71 / / rw,relatime master:503 - overlay overlay rw,lowerdir=/x',
      `1040 1021 254:1 /var/lib/docker/containers/${ID_A}/hostname /etc/hostname rw,relatime - ext4 /dev/vda1 rw`,
    ].join('\n');
    expect(containerIdFromMountinfo(inContainer)).toBe(ID_A);
    // Another data root (a second engine) keeps the same layout under it.
    expect(
      containerIdFromMountinfo(
        `77 70 0:5 /tmp/engine2/containers/${ID_B}/resolv.conf /etc/resolv.conf rw - ext4 /dev/vda1 rw`,
      ),
    ).toBe(ID_B);
    expect(
      containerIdFromMountinfo('25 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw'),
    ).toBe(undefined);
  });
});

describe('rootFilesystemMatches', () => {
  const root =
    '74 49 0:39 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A,' +
    'upperdir=/var/lib/docker/overlay2/abc/diff,workdir=/var/lib/docker/overlay2/abc/work\n';

  it('accepts the container whose overlay is our root, and refuses one whose files we only borrow', () => {
    expect(rootFilesystemMatches(root, '/var/lib/docker/overlay2/abc/diff')).toBe(true);
    // network_mode service:X: X's hostname file, but X's overlay is not ours.
    expect(rootFilesystemMatches(root, '/var/lib/docker/overlay2/other/diff')).toBe(false);
    expect(rootFilesystemMatches(root, '/var/lib/docker/overlay2/ab')).toBe(false);
    // A storage driver without an upper directory cannot be checked.
    expect(rootFilesystemMatches(root, undefined)).toBe(true);
  });
});

describe('ownerLiveness', () => {
  const host = 'plane-host';
  const onHost: PlaneOwner = { host, pid: 4242 };
  const inContainer: PlaneOwner = { host: 'c0ffee', pid: 1, container: ID_A };
  const noEngine = async () => {
    throw new Error('the engine must not be asked');
  };

  it('counts containers of versions before the owner labels as gone', async () => {
    expect(await ownerLiveness({}, onHost, noEngine)).toBe('gone');
  });

  it('asks the engine about an owner in a container, and never counts our own container', async () => {
    const running = async (id: string) => (id === ID_B ? true : undefined);
    const labelsOf = (container: string) => ownerLabels({ host: 'x', pid: 1, container });
    expect(await ownerLiveness(labelsOf(ID_B), onHost, running)).toBe('running');
    expect(await ownerLiveness(labelsOf(ID_B), inContainer, async () => false)).toBe('gone');
    expect(await ownerLiveness(labelsOf('c'.repeat(64)), inContainer, running)).toBe('gone');
    // The process our container ran before a restart.
    expect(await ownerLiveness(labelsOf(ID_A), inContainer, noEngine)).toBe('gone');
  });

  it('asks the host about a process owner on the same host, by pid', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    await once(child, 'spawn');
    const labels = ownerLabels({ host, pid: child.pid! });
    try {
      expect(await ownerLiveness(labels, onHost, noEngine)).toBe('running');
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    expect(await ownerLiveness(labels, onHost, noEngine)).toBe('gone');
    // Our own pid under another instance: a process before us that had it.
    expect(await ownerLiveness(ownerLabels(onHost), onHost, noEngine)).toBe('gone');
  });

  it('cannot tell about a process on another host, or from inside a container', async () => {
    const elsewhere = ownerLabels({ host: 'other-host', pid: process.pid });
    expect(await ownerLiveness(elsewhere, onHost, noEngine)).toBe('unknown');
    expect(await ownerLiveness(ownerLabels(onHost), inContainer, noEngine)).toBe('unknown');
  });
});
