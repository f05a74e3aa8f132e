/**
 * What the reverse-proxy test needs around the shipped examples in deploy/:
 * the binaries found (or not), a throwaway CA and wildcard certificate made
 * with the openssl CLI, literal substitution that fails when a literal is
 * gone, nginx and caddy run as child processes on loopback ports (each
 * stopped by its PID), and clients that trust the CA and choose the loopback
 * address they connect from.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { access, chmod, readFile, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';

const run = promisify(execFile);

/** How long a proxy may take to listen, in ms. */
const START_TIMEOUT_MS = 15_000;
/** How long a proxy may take to exit after SIGTERM before it is killed, in ms. */
const STOP_TIMEOUT_MS = 5_000;
/** Most output kept from a proxy, for failure messages, in characters. */
const OUTPUT_LIMIT = 20_000;

/** The absolute path of `name` in PATH or the sbin directories (nginx lives in /usr/sbin); undefined when absent. */
export async function findBinary(name: string): Promise<string | undefined> {
  const directories = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin', '/sbin'];
  for (const directory of directories.filter((d) => d !== '')) {
    const candidate = join(directory, name);
    if (
      await access(candidate).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return undefined;
}

/** True when something can listen on ::1 (containers often have no IPv6). */
export async function hasIpv6Loopback(): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(0, '::1', () => server.close(() => resolve(true)));
  });
}

export interface WildcardCertificate {
  /** The CA certificate (PEM text) a client must trust. */
  caPem: string;
  /** Path of the leaf certificate (the proxy's fullchain.pem). */
  certificatePath: string;
  /** Path of the leaf's private key (the proxy's privkey.pem). */
  keyPath: string;
}

/** A CA and a leaf for `*.{domain}` and `{domain}` signed by it, valid two days, written into `dir`. */
export async function makeWildcardCertificate(
  dir: string,
  domain: string,
): Promise<WildcardCertificate> {
  const file = (name: string) => join(dir, name);
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  // prettier-ignore
  await run('openssl', [
    'req', '-x509', ...ecKey, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2',
    '-subj', '/CN=mcphost reverse-proxy test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  // prettier-ignore
  await run('openssl', [
    'req', ...ecKey, '-keyout', file('privkey.pem'), '-out', file('leaf.csr'),
    '-subj', `/CN=*.${domain}`,
  ]);
  await writeFile(
    file('leaf.ext'),
    [
      `subjectAltName=DNS:*.${domain},DNS:${domain}`,
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth',
    ].join('\n'),
  );
  // prettier-ignore
  await run('openssl', [
    'x509', '-req', '-in', file('leaf.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'),
    '-CAcreateserial', '-days', '2', '-extfile', file('leaf.ext'), '-out', file('fullchain.pem'),
  ]);
  return {
    caPem: await readFile(file('ca.pem'), 'utf8'),
    certificatePath: file('fullchain.pem'),
    keyPath: file('privkey.pem'),
  };
}

/**
 * Replaces every occurrence of each literal, in order. Throws naming every
 * literal that no longer occurs, so a test built on an example fails when the
 * example drifts from what the test substitutes.
 */
export function substituteLiterals(text: string, replacements: [string, string][]): string {
  const missing = replacements.filter(([literal]) => !text.includes(literal));
  if (missing.length > 0) {
    throw new Error(
      `the example no longer contains: ${missing.map(([literal]) => JSON.stringify(literal)).join(', ')}`,
    );
  }
  return replacements.reduce((result, [literal, value]) => result.replaceAll(literal, value), text);
}

/** A proxy running as a child process. */
export interface ProxyProcess {
  pid: number;
  /** Everything it wrote to stdout and stderr so far (the last OUTPUT_LIMIT characters). */
  output(): string;
  /** SIGTERM, then SIGKILL if it has not exited within STOP_TIMEOUT_MS. */
  stop(): Promise<void>;
}

/** Starts `command` and resolves once every port in `ports` accepts connections on 127.0.0.1; kills it when it does not. */
export async function startProxy(
  command: string,
  args: string[],
  ports: number[],
  env: Record<string, string> = {},
): Promise<ProxyProcess> {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-OUTPUT_LIMIT));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proxy: ProxyProcess = {
    pid: child.pid!,
    output: () => output,
    stop: () => stopChild(child, exited),
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (const port of ports) {
    while (!(await accepts(port))) {
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        await proxy.stop();
        throw new Error(`${command} did not start listening on ${port}:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return proxy;
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = new Promise<'late'>((resolve) =>
    setTimeout(() => resolve('late'), STOP_TIMEOUT_MS).unref(),
  );
  if ((await Promise.race([exited, timer])) === 'late') {
    child.kill('SIGKILL');
    await exited;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * The main nginx.conf around a conf.d file, everything nginx writes kept in
 * `runDir`. Debian's nginx runs its workers as an unprivileged user when
 * started as root: they must traverse `runDir` to write request bodies.
 */
export async function writeNginxMainConfig(runDir: string, siteFile: string): Promise<string> {
  await chmod(runDir, 0o755);
  const path = (name: string) => join(runDir, name);
  const main = `daemon off;
worker_processes 1;
pid ${path('nginx.pid')};
error_log ${path('error.log')} info;
events {}
http {
    access_log ${path('access.log')};
    client_body_temp_path ${path('client_body')};
    proxy_temp_path ${path('proxy')};
    fastcgi_temp_path ${path('fastcgi')};
    uwsgi_temp_path ${path('uwsgi')};
    scgi_temp_path ${path('scgi')};
    include ${siteFile};
}
`;
  await writeFile(path('nginx.conf'), main);
  return path('nginx.conf');
}

/**
 * Caddy's global options for a test run, put before the example's site
 * blocks (the example has none of its own): no admin endpoint, loopback
 * ports, storage in `runDir`, no trust-store changes, no UDP (HTTP/3) listener.
 */
export function caddyGlobalOptions(runDir: string, httpPort: number, httpsPort: number): string {
  return `{
	admin off
	http_port ${httpPort}
	https_port ${httpsPort}
	default_bind 127.0.0.1
	storage file_system ${join(runDir, 'storage')}
	skip_install_trust
	servers {
		protocols h1 h2
	}
}

`;
}

/**
 * fetch functions for clients of the proxy: every name resolves to
 * 127.0.0.1 (the proxy), the test CA is trusted, and each connects from a
 * loopback address of its own, so a proxy sees different clients.
 */
export class ProxyClients {
  readonly #caPem: string;
  readonly #agents = new Map<string, Agent>();

  constructor(caPem: string) {
    this.#caPem = caPem;
  }

  /** fetch whose connections leave from `localAddress` (any 127.x address on Linux). */
  from(localAddress: string): typeof fetch {
    const agent = this.#agents.get(localAddress) ?? this.#newAgent(localAddress);
    this.#agents.set(localAddress, agent);
    return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
      undiciFetch(
        input as never,
        { ...(init as object), dispatcher: agent } as never,
      )) as unknown as typeof fetch;
  }

  /** The protocol a TLS server on 127.0.0.1:`port` picks over ALPN when offered h2 and HTTP/1.1. */
  negotiatedProtocol(port: number, servername: string): Promise<string | false | null> {
    return new Promise((resolve, reject) => {
      const socket = tlsConnect({
        host: '127.0.0.1',
        port,
        servername,
        ca: this.#caPem,
        ALPNProtocols: ['h2', 'http/1.1'],
      });
      socket.once('secureConnect', () => {
        resolve(socket.alpnProtocol ?? null);
        socket.destroy();
      });
      socket.once('error', reject);
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.#agents.values()].map((agent) => agent.close()));
  }

  #newAgent(localAddress: string): Agent {
    return new Agent({
      localAddress,
      connect: {
        ca: this.#caPem,
        lookup: (_hostname, options, callback) => {
          if ((options as { all?: boolean }).all) {
            callback(null, [{ address: '127.0.0.1', family: 4 }]);
          } else (callback as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4);
        },
      },
    });
  }
}
