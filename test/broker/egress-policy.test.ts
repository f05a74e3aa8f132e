import { describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../control-plane/broker/egress/egress-policy.js';
import { parseEgressAllowEntry } from '../../control-plane/broker/egress/allow-entry.js';
import { HostAddresses } from '../../control-plane/broker/egress/host-addresses.js';
import { McphostError } from '../../control-plane/errors.js';

function refusal(
  policy: EgressPolicy,
  host: string,
  address = host,
  port?: number,
): McphostError | undefined {
  try {
    policy.check(host, address, port);
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

  it('rejects malformed allow-list entries with ERR_CONFIG naming them', () => {
    for (const entry of ['10.0.0.0/33', 'http://x', '0x7f.1', 'a b', '10.0.0.0/8/1']) {
      expect(() => EgressPolicy.fromAllowList([entry])).toThrow(
        expect.objectContaining({ code: 'ERR_CONFIG', message: expect.stringContaining(entry) }),
      );
    }
  });

  // Pure decisions only: none of these addresses is ever connected to.
  it.each([
    '192.0.2.1', // TEST-NET-1
    '198.51.100.1', // TEST-NET-2
    '203.0.113.1', // TEST-NET-3
    '192.88.99.1', // deprecated 6to4 relay anycast
    '198.18.0.1', // benchmarking
    '198.19.255.254',
    '100.64.0.1', // CGNAT
    '192.0.0.8', // IETF protocol assignments
    '240.0.0.1', // reserved
    '239.255.255.250', // multicast
    '2001:db8::1', // documentation
    '3fff::1', // documentation (RFC 9637)
    '64:ff9b:1::a00:1', // local-use NAT64
    '2001:2::1', // benchmarking
    '2001:10::1', // deprecated ORCHID
    '100::1', // discard-only
    '5f00::1', // segment routing
    'ff0e::1', // global-scope multicast is still multicast
    '4000::1', // outside 2000::/3
    '::ffff:192.0.2.1',
    '::ffff:198.51.100.7',
    '64:ff9b::203.0.113.9',
    '2002:c000:0201::1', // 6to4 of 192.0.2.1
  ])('refuses the special-purpose address %s unless allowed', (address) => {
    const error = refusal(publicOnly, address);
    expect(error?.code).toBe('ERR_EGRESS_DENIED');
    expect(error?.message).toMatch(/need an EGRESS_ALLOW entry$/);
    expect(refusal(allowEverything, address)).toBeUndefined();
  });

  it.each([
    '192.31.196.1', // AS112, globally reachable
    '192.52.193.1', // AMT, globally reachable
    '2001:4860:4860::8888',
    '2001:20::1', // ORCHIDv2, globally reachable
    '2002:808:808::1', // 6to4 of 8.8.8.8
  ])('allows the globally reachable address %s', (address) => {
    expect(refusal(publicOnly, address)).toBeUndefined();
  });

  it("refuses this host's own interface addresses, whatever their range, and re-reads them", () => {
    let interfaces = ['127.0.0.1', '8.8.4.4', '2606:4700::1111', 'fe80::1%eth0'];
    let clock = 0;
    const hostAddresses = new HostAddresses(
      () => interfaces,
      2_000,
      () => clock,
    );
    const policy = EgressPolicy.fromAllowList([], { hostAddresses });
    for (const address of ['8.8.4.4', '::ffff:8.8.4.4', '2002:808:404::1', '2606:4700::1111']) {
      expect(refusal(policy, 'api.example', address)?.message).toMatch(
        /is an address of this host; .*need an EGRESS_ALLOW entry$/,
      );
    }
    expect(refusal(policy, '8.8.8.8')).toBeUndefined();
    expect(
      refusal(
        EgressPolicy.fromAllowList(['8.8.4.4:443'], { hostAddresses }),
        '8.8.4.4',
        '8.8.4.4',
        443,
      ),
    ).toBeUndefined();
    // An interface that appears later is refused once the list is older than its maximum age.
    interfaces = [...interfaces, '1.1.1.1'];
    expect(refusal(policy, '1.1.1.1')).toBeUndefined();
    clock = 2_001;
    expect(refusal(policy, '1.1.1.1')?.message).toContain('is an address of this host');
  });

  it('refuses a Teredo address unless every IPv4 address it carries is allowed', () => {
    // Teredo: server 127.0.0.1 (7f00:1), client 10.0.0.1 stored inverted (f5ff:fffe).
    const teredo = '2001:0:7f00:1::f5ff:fffe';
    const onlyLoopback = EgressPolicy.fromAllowList(['127.0.0.1/32']);
    expect(refusal(onlyLoopback, teredo)?.message).toContain('10.0.0.1 is a private address');
    expect(
      refusal(EgressPolicy.fromAllowList(['127.0.0.1/32', '10.0.0.1']), teredo),
    ).toBeUndefined();
    // A mapped address is judged by the address it carries alone.
    expect(refusal(onlyLoopback, '::ffff:127.0.0.1')).toBeUndefined();
    expect(refusal(onlyLoopback, '::ffff:127.0.0.2')?.code).toBe('ERR_EGRESS_DENIED');
  });

  it('takes ports on allow entries', () => {
    const policy = EgressPolicy.fromAllowList([
      '10.0.0.5:5432',
      '10.1.0.0/16:443',
      'db.internal:3306',
      '[fd00::1]:443',
      '[fd01::/16]:8443',
      'fd02::1',
      '*.corp.example:443',
    ]);
    expect(refusal(policy, '10.0.0.5', '10.0.0.5', 5432)).toBeUndefined();
    expect(refusal(policy, '10.0.0.5', '10.0.0.5', 5433)?.message).toContain(
      'an allow entry covers it, but not on port 5433',
    );
    expect(refusal(policy, '10.0.0.5', '10.0.0.5')?.code).toBe('ERR_EGRESS_DENIED');
    expect(refusal(policy, '10.1.2.3', '10.1.2.3', 443)).toBeUndefined();
    expect(refusal(policy, '10.1.2.3', '10.1.2.3', 80)?.code).toBe('ERR_EGRESS_DENIED');
    expect(refusal(policy, 'db.internal', '10.9.9.9', 3306)).toBeUndefined();
    expect(refusal(policy, 'db.internal', '10.9.9.9', 5432)?.code).toBe('ERR_EGRESS_DENIED');
    expect(refusal(policy, 'fd00::1', 'fd00::1', 443)).toBeUndefined();
    expect(refusal(policy, 'fd00::1', 'fd00::1', 80)?.code).toBe('ERR_EGRESS_DENIED');
    expect(refusal(policy, 'fd01:9::1', 'fd01:9::1', 8443)).toBeUndefined();
    expect(refusal(policy, 'fd02::1', 'fd02::1', 1)).toBeUndefined();
    expect(refusal(policy, 'api.corp.example', '192.168.0.9', 443)).toBeUndefined();
    expect(refusal(policy, 'api.corp.example', '192.168.0.9', 80)?.code).toBe('ERR_EGRESS_DENIED');
  });

  it("adds a server's own entries on top, for that server's policy only", () => {
    const service = EgressPolicy.fromAllowList(['10.0.0.1']);
    const server = service.withServerAllow(['10.0.0.5:5432', 'api.internal']);
    expect(refusal(server, '10.0.0.5', '10.0.0.5', 5432)).toBeUndefined();
    expect(refusal(server, 'api.internal', '172.16.0.3', 80)).toBeUndefined();
    expect(refusal(server, '10.0.0.1', '10.0.0.1', 80)).toBeUndefined();
    expect(refusal(service, '10.0.0.5', '10.0.0.5', 5432)?.code).toBe('ERR_EGRESS_DENIED');
    expect(() => service.withServerAllow(['10.0.0.0/99'])).toThrow(
      expect.objectContaining({
        code: 'ERR_CONFIG',
        message: expect.stringContaining('10.0.0.0/99'),
      }),
    );
  });

  it('parses allow entries, naming a malformed one', () => {
    expect(parseEgressAllowEntry('[fd00::/8]:443')).toMatchObject({
      kind: 'network',
      address: 'fd00::',
      prefix: 8,
      port: 443,
    });
    expect(parseEgressAllowEntry('DB.Internal:5432')).toMatchObject({
      kind: 'host',
      name: 'db.internal',
      port: 5432,
    });
    for (const entry of [
      '10.0.0.5:0',
      '10.0.0.5:65536',
      '10.0.0.5:',
      '[fd00::1',
      '[fd00::1]443',
      'db.internal:http',
      '[db.internal]:80',
      '10.0.0.0/8/1',
    ]) {
      expect(parseEgressAllowEntry(entry)).toBe(
        `"${entry}" is not an IP address, CIDR or hostname with an optional :port`,
      );
    }
  });
});
