import { describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../control-plane/broker/egress/egress-policy.js';
import { McphostError } from '../../control-plane/errors.js';

function refusal(policy: EgressPolicy, host: string, address = host): McphostError | undefined {
  try {
    policy.check(host, address);
    return undefined;
  } catch (error) {
    if (error instanceof McphostError) return error;
    throw error;
  }
}

describe('EgressPolicy', () => {
  const publicOnly = EgressPolicy.fromAllowList([]);
  const allowEverything = EgressPolicy.fromAllowList([
    '0.0.0.0/0',
    '::/0',
    '*.example',
    'metadata.google.internal',
  ]);

  it.each([
    '169.254.169.254',
    '169.254.0.1',
    'fd00:ec2::254',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::a9fe:a9fe',
    '::ffff:0:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '2002:a9fe:a9fe::',
    'fd20:ce::254', // GCP's IPv6 metadata server
    '168.63.129.16', // Azure WireServer: a public address
    '100.100.100.200', // Alibaba Cloud, inside CGNAT space
    '::ffff:168.63.129.16',
  ])('always refuses the metadata address %s, even when everything is allowed', (address) => {
    for (const policy of [publicOnly, allowEverything]) {
      const error = refusal(policy, 'metadata.google.internal', address);
      expect(error?.code).toBe('ERR_EGRESS_DENIED');
      expect(error?.message).toContain('metadata.google.internal');
      expect(error?.message).toContain(address);
    }
  });

  it('judges the address, not the spelling of the host', () => {
    const error = refusal(publicOnly, '0xa9fea9fe', '169.254.169.254');
    expect(error?.message).toBe(
      'egress to 0xa9fea9fe (169.254.169.254) is not allowed: cloud metadata addresses are always refused',
    );
  });

  it.each([
    '0.0.0.0',
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '64:ff9b::10.0.0.1',
  ])('refuses internal address %s by default and allows it when listed', (address) => {
    const error = refusal(publicOnly, address);
    expect(error?.code).toBe('ERR_EGRESS_DENIED');
    expect(error?.message).toMatch(/need an EGRESS_ALLOW entry/);
    expect(refusal(allowEverything, address)).toBeUndefined();
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '64:ff9b::8.8.8.8',
  ])('allows the public address %s', (address) => {
    expect(refusal(publicOnly, address)).toBeUndefined();
  });

  it('allows exactly the listed networks', () => {
    const policy = EgressPolicy.fromAllowList([' 10.1.0.0/16 ', '127.0.0.2', 'fd12::/16']);
    expect(refusal(policy, '10.1.200.3')).toBeUndefined();
    expect(refusal(policy, '10.2.0.1')?.code).toBe('ERR_EGRESS_DENIED');
    expect(refusal(policy, '127.0.0.2')).toBeUndefined();
    expect(refusal(policy, '::ffff:127.0.0.2')).toBeUndefined();
    expect(refusal(policy, '127.0.0.1')?.code).toBe('ERR_EGRESS_DENIED');
    expect(refusal(policy, 'fd12:1::1')).toBeUndefined();
    expect(refusal(policy, 'fd13::1')?.code).toBe('ERR_EGRESS_DENIED');
  });

  it('allows a listed hostname at any non-metadata address it resolves to', () => {
    const policy = EgressPolicy.fromAllowList(['db.internal', '*.corp.example']);
    expect(refusal(policy, 'db.internal', '10.0.0.5')).toBeUndefined();
    expect(refusal(policy, 'DB.Internal.', '10.0.0.5')).toBeUndefined();
    expect(refusal(policy, 'api.corp.example', '192.168.3.4')).toBeUndefined();
    expect(refusal(policy, 'corp.example', '192.168.3.4')?.code).toBe('ERR_EGRESS_DENIED');
    expect(refusal(policy, 'other.internal', '10.0.0.5')?.code).toBe('ERR_EGRESS_DENIED');
    expect(refusal(policy, 'db.internal', '169.254.169.254')?.code).toBe('ERR_EGRESS_DENIED');
  });

  it('reads the raw EGRESS_ALLOW value', () => {
    const policy = EgressPolicy.fromEnvValue(' 10.0.0.0/8, db.internal  192.168.1.1 ');
    expect(refusal(policy, '10.9.9.9')).toBeUndefined();
    expect(refusal(policy, 'db.internal', '172.16.0.1')).toBeUndefined();
    expect(refusal(policy, '192.168.1.1')).toBeUndefined();
    expect(refusal(EgressPolicy.fromEnvValue(undefined), '10.9.9.9')?.code).toBe(
      'ERR_EGRESS_DENIED',
    );
  });

  it('rejects malformed allow-list entries with ERR_CONFIG naming them', () => {
    for (const entry of ['10.0.0.0/33', 'http://x', '0x7f.1', 'a b', '10.0.0.0/8/1']) {
      expect(() => EgressPolicy.fromAllowList([entry])).toThrow(
        expect.objectContaining({ code: 'ERR_CONFIG', message: expect.stringContaining(entry) }),
      );
    }
  });
});
