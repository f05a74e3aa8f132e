/**
 * The banner of `npm start` (pure logic): the listening address and who may
 * connect, a token line that makes its curl work as pasted, and a next step
 * that fits the store (a first server, or the servers there are).
 */
import { describe, expect, it } from 'vitest';
import { adminOrigin, bannerLines, type BannerFacts } from '../../control-plane/banner.js';

const facts = (overrides: Partial<BannerFacts> = {}): BannerFacts => ({
  listenHost: '127.0.0.1',
  port: 8080,
  adminPort: 8080,
  mcpUrlPattern: 'http://localhost:8080/servers/{subdomain}/mcp',
  otherMcpUrlPatterns: ['http://{subdomain}.localhost:8080/mcp'],
  token: { kind: 'generated', token: 'mcph_abc' },
  servers: [],
  ...overrides,
});

const text = (overrides: Partial<BannerFacts> = {}) => bannerLines(facts(overrides)).join('\n');

describe('the banner', () => {
  it('says where it listens and how to open it to other machines', () => {
    expect(text()).toContain(
      'listening on 127.0.0.1:8080: this machine only (LISTEN_HOST=0.0.0.0 lets other machines connect)',
    );
    expect(text({ listenHost: '0.0.0.0' })).toContain(
      'listening on 0.0.0.0:8080: every interface, other machines can connect (LISTEN_HOST=127.0.0.1 keeps it to this one)',
    );
    expect(text({ listenHost: '::1', adminPort: 8081 })).toContain(
      'listening on [::1]:8080 (MCP) and [::1]:8081 (admin): this machine only',
    );
    expect(text({ listenHost: '10.0.0.5' })).toContain('listening on 10.0.0.5:8080 (LISTEN_HOST)');
  });

  it('names the dashboard on the admin port, reachable from this machine', () => {
    expect(text({ adminPort: 8081 })).toContain('  dashboard:   http://localhost:8081/');
    expect(adminOrigin('0.0.0.0', 8080)).toBe('http://localhost:8080');
    expect(adminOrigin('10.0.0.5', 8080)).toBe('http://10.0.0.5:8080');
    expect(adminOrigin('fd00::5', 8080)).toBe('http://[fd00::5]:8080');
  });

  it('prints the MCP address forms, preferred first', () => {
    const lines = bannerLines(facts());
    const at = lines.indexOf('  MCP servers: http://localhost:8080/servers/{subdomain}/mcp');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe('           or http://{subdomain}.localhost:8080/mcp');
  });

  it('gives a token line to paste that the curl below uses', () => {
    expect(text()).toContain('    export TOKEN=mcph_abc\n');
    expect(text()).toContain('curl -H "Authorization: Bearer $TOKEN"');
    expect(text({ token: { kind: 'environment' } })).toContain('    export TOKEN="$ADMIN_TOKEN"');
    expect(text({ token: { kind: 'file', path: '/run/secrets/admin_token' } })).toContain(
      '    export TOKEN="$(cat /run/secrets/admin_token)"',
    );
    expect(text({ token: { kind: 'file', path: "/my dir/it's" } })).toContain(
      `    export TOKEN="$(cat '/my dir/it'\\''s')"`,
    );
    expect(text({ token: { kind: 'settings-file', file: 'mcphost.env' } })).toContain(
      'ADMIN_TOKEN in mcphost.env',
    );
    const stored = text({ token: { kind: 'stored' } });
    expect(stored).not.toContain('export TOKEN');
    expect(stored).toContain('npm run admin-token -- --rotate');
  });

  it('shows how to create a first server only while there is none', () => {
    const empty = text();
    expect(empty).toContain('No servers yet. Create a first one:');
    expect(empty).toContain(`-d '{"subdomain":"acme"}' http://localhost:8080/api/servers`);
    expect(empty).toContain('MCP clients then connect to http://localhost:8080/servers/acme/mcp');

    const some = text({
      servers: [
        { subdomain: 'acme', mcpUrl: 'http://localhost:8080/servers/acme/mcp' },
        { subdomain: 'b', mcpUrl: 'http://localhost:8080/servers/b/mcp' },
      ],
    });
    expect(some).not.toContain('Create a first one');
    expect(some).not.toContain('curl');
    expect(some).toContain(
      '  2 servers:\n    acme  http://localhost:8080/servers/acme/mcp\n    b     http://localhost:8080/servers/b/mcp',
    );
  });

  it('names five servers and counts the rest, with the dashboard', () => {
    const servers = Array.from({ length: 7 }, (_, i) => ({
      subdomain: `s${i}`,
      mcpUrl: `http://localhost:8080/servers/s${i}/mcp`,
    }));
    const lines = bannerLines(facts({ servers }));
    expect(lines.filter((line) => line.includes('/servers/s'))).toHaveLength(5);
    expect(lines).toContain('    … and 2 more: http://localhost:8080/');
  });

  it('says what --demo did', () => {
    expect(
      text({
        demo: { subdomain: 'demo', tools: ['greet', 'sales_summary'], createdServer: true },
        servers: [{ subdomain: 'demo', mcpUrl: 'http://localhost:8080/servers/demo/mcp' }],
      }),
    ).toContain('Demo server "demo" created, with tools greet, sales_summary.');
    expect(text({ demo: { subdomain: 'demo', tools: ['greet'], createdServer: false } })).toContain(
      'Demo server "demo" was there already',
    );
  });
});
