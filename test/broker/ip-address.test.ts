import { describe, expect, it } from 'vitest';
import {
  classifyHost,
  embeddedIpv4,
  formatIpv6,
  parseIpv6,
} from '../../control-plane/broker/egress/ip-address.js';

/** What the WHATWG URL parser makes of a host, the reference our parser must agree with. */
function whatwgHostname(host: string): string | 'failure' {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return 'failure';
  }
}

describe('classifyHost', () => {
  const metadataForms = [
    '169.254.169.254',
    '2852039166',
    '0xa9fea9fe',
    '0XA9FEA9FE',
    '0251.0376.0251.0376',
    '0xa9.0xfe.0xa9.0xfe',
    '169.254.43518',
    '169.16689662',
    '0251.0xfe.43518',
    '169.254.169.254.',
    '00000251.254.169.254',
  ];
  it.each(metadataForms)('reads %s as 169.254.169.254, like the URL parser', (host) => {
    expect(classifyHost(host)).toEqual({
      kind: 'ip',
      ip: { family: 4, address: '169.254.169.254' },
    });
    expect(whatwgHostname(host)).toBe('169.254.169.254');
  });

  it.each(['127.1', '0x7f.1', '017700000001', '2130706433', '0x7f000001'])(
    'reads %s as loopback',
    (host) => {
      expect(classifyHost(host)).toEqual({ kind: 'ip', ip: { family: 4, address: '127.0.0.1' } });
      expect(whatwgHostname(host)).toBe('127.0.0.1');
    },
  );

  it.each(['1.2.3.256', '4294967296', '1.2.3.4.5', '09.1.1.1', '1.2.3.0x'])(
    'rejects %s as a malformed IPv4 address, as the URL parser does',
    (host) => {
      const expected = whatwgHostname(host);
      const ours = classifyHost(host);
      if (expected === 'failure') expect(ours.kind).toBe('invalid');
      else expect(ours).toEqual({ kind: 'ip', ip: { family: 4, address: expected } });
    },
  );

  it.each(['example.com', 'db.internal', '1.2.3.example', 'localhost', 'a0x1', '0x1g'])(
    'treats %s as a name',
    (host) => {
      expect(classifyHost(host)).toEqual({ kind: 'name' });
    },
  );

  it.each([
    ['[::ffff:169.254.169.254]', '::ffff:a9fe:a9fe'],
    ['::FFFF:A9FE:A9FE', '::ffff:a9fe:a9fe'],
    ['[fd00:ec2:0:0:0:0:0:254]', 'fd00:ec2::254'],
    ['fe80::1%eth0', 'fe80::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['64:ff9b::169.254.169.254', '64:ff9b::a9fe:a9fe'],
  ])('normalises IPv6 %s to %s', (host, canonical) => {
    expect(classifyHost(host)).toEqual({ kind: 'ip', ip: { family: 6, address: canonical } });
  });

  it('formats IPv6 the way the URL parser does', () => {
    for (const text of [
      '::ffff:169.254.169.254',
      '1:0:0:2:0:0:0:3',
      'fd00:ec2::254',
      '2001:db8::',
      '::',
    ]) {
      expect(`[${formatIpv6(parseIpv6(text))}]`).toBe(whatwgHostname(`[${text}]`));
    }
  });
});

describe('embeddedIpv4', () => {
  it.each([
    ['::ffff:169.254.169.254', ['169.254.169.254']],
    ['::169.254.169.254', ['169.254.169.254']],
    ['::ffff:0:169.254.169.254', ['169.254.169.254']],
    ['64:ff9b::a9fe:a9fe', ['169.254.169.254']],
    ['64:ff9b:1::a9fe:a9fe', ['169.254.169.254']],
    ['2002:a9fe:a9fe::1', ['169.254.169.254']],
    ['::1', []],
    ['::', []],
    ['2606:4700::1111', []],
  ])('finds the IPv4 address carried by %s', (address, expected) => {
    expect(embeddedIpv4(parseIpv6(address))).toEqual(expected);
  });

  it('decodes a Teredo client address', () => {
    // Client 169.254.169.254 is stored inverted: 0x5601:0x5601.
    expect(embeddedIpv4(parseIpv6('2001:0:4136:e378:8000:63bf:5601:5601'))).toContain(
      '169.254.169.254',
    );
  });
});
