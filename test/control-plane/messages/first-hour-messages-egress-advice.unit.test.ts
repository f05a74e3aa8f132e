/**
 * The advice of a refused destination, for each way a tool names it: the
 * entry it suggests is the narrowest one the allow-list syntax reads (the
 * address as the policy reads it, a name as written, brackets around IPv6
 * with a port), for the calling server's own setting first. The control
 * plane's own requests (OAuth metadata) are told EGRESS_ALLOW only, since a
 * server's setting does not apply to them; cloud metadata is refused with no advice.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVER_ALLOW_LABEL } from '../../../control-plane/broker/egress/egress-advice.js';
import { OAUTH_SERVER_URL_LABEL } from '../../../control-plane/identity/oauth/metadata-problems.js';
import { EgressPolicy } from '../../../control-plane/broker/egress/egress-policy.js';
import { parseEgressAllowEntry } from '../../../control-plane/broker/egress/allow-entry.js';
import { McphostError } from '../../../control-plane/errors.js';

function refusal(policy: EgressPolicy, host: string, address: string, port?: number): string {
  try {
    policy.check(host, address, port);
  } catch (error) {
    if (error instanceof McphostError && error.code === 'ERR_EGRESS_DENIED') return error.message;
    throw error;
  }
  throw new Error(`${host} was allowed`);
}

const advice = (entry: string) =>
  `. To let this server's tools reach it, add ${entry} to "Private hosts its tools may reach" in its settings ` +
  '(dashboard: Settings, Sharing this host; API: egressAllow in PATCH /api/servers/shop/settings), ' +
  'which takes effect at once; or, for every server, add it to EGRESS_ALLOW and restart mcphost.';

describe("a server's refusals", () => {
  const shop = EgressPolicy.fromAllowList([]).forServer('shop', []);

  it.each([
    [
      'db.internal',
      '10.0.0.7',
      5432,
      'egress to db.internal (10.0.0.7) is not allowed: 10.0.0.7 is a private address (RFC 1918)',
      'db.internal:5432',
    ],
    [
      '0x0a000001',
      '10.0.0.1',
      80,
      'egress to 0x0a000001 (10.0.0.1) is not allowed: 10.0.0.1 is a private address (RFC 1918)',
      '10.0.0.1:80',
    ],
    [
      '[fd00::1]',
      'fd00::1',
      443,
      'egress to fd00::1 is not allowed: fd00::1 is a unique-local address (fc00::/7)',
      '[fd00::1]:443',
    ],
    [
      '192.168.1.9',
      '192.168.1.9',
      undefined,
      'egress to 192.168.1.9 is not allowed: 192.168.1.9 is a private address (RFC 1918)',
      '192.168.1.9',
    ],
  ])('suggests the entry for %s', (host, address, port, head, entry) => {
    expect(refusal(shop, host, address, port)).toBe(head + advice(entry));
    // …and that entry, in the server's setting, is what lets it through.
    expect(parseEgressAllowEntry(entry)).not.toBeTypeOf('string');
    expect(() =>
      EgressPolicy.fromAllowList([]).forServer('shop', [entry]).check(host, address, port),
    ).not.toThrow();
  });

  it('says when an entry covers the address on another port', () => {
    const other = EgressPolicy.fromAllowList([]).forServer('shop', ['10.0.0.7:5433']);
    expect(refusal(other, '10.0.0.7', '10.0.0.7', 5432)).toBe(
      'egress to 10.0.0.7 is not allowed: 10.0.0.7 is a private address (RFC 1918) (an allow entry covers it, but not on port 5432)' +
        advice('10.0.0.7:5432'),
    );
  });

  it('gives no advice for cloud metadata, which nothing allows', () => {
    expect(refusal(shop, '169.254.169.254', '169.254.169.254', 80)).toBe(
      'egress to 169.254.169.254 is not allowed: cloud metadata addresses are always refused',
    );
  });
});

describe("the control plane's own refusals", () => {
  it('name EGRESS_ALLOW only, also with the development loopback exception', () => {
    const own = EgressPolicy.fromAllowList([]).withServerAllow(['127.0.0.0/8', '::1']);
    expect(refusal(own, '10.0.0.7', '10.0.0.7', 443)).toBe(
      "egress to 10.0.0.7 is not allowed: 10.0.0.7 is a private address (RFC 1918); this host's own, internal and special-purpose addresses need an EGRESS_ALLOW entry",
    );
  });
});

describe('the words the messages borrow from the dashboard', () => {
  const source = (file: string) =>
    readFileSync(new URL(`../../../control-plane/dashboard/src/${file}`, import.meta.url), 'utf8');

  it("are its labels, word for word: a server's private hosts, and the OAuth Server URL", () => {
    expect(source('tenancy-form.ts')).toContain(`'${SERVER_ALLOW_LABEL}'`);
    expect(source('tenancy-form.ts')).toContain("'Sharing this host'");
    expect(source('settings-tab.ts')).toContain(`'${OAUTH_SERVER_URL_LABEL}'`);
  });
});
