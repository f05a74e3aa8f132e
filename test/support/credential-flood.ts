/**
 * A flood of made-up credentials at a hosted server's `/mcp`, sent from a
 * child process (so the flood's own CPU is not the test's event loop, as an
 * attacker's is not the server's), as `initialize` POSTs over keep-alive
 * connections from a claimed client address (X-Forwarded-For, believed when
 * the control plane trusts loopback as a proxy). Each request carries a new
 * random API key, or the next of the given bearer tokens.
 */
import { spawn } from 'node:child_process';

/** What to send, and for how long. */
export interface CredentialFloodOptions {
  /** The control plane's port and the hosted server's subdomain (`{sub}.localhost`). */
  port: number;
  subdomain: string;
  /** X-Forwarded-For of every request. */
  forwardedFor: string;
  /** Requests in flight at once. */
  concurrency: number;
  /** How long to send, in ms. */
  durationMs: number;
  /** Bearer tokens sent in turn; absent = a new random `mcph_ak_` key each time. */
  tokens?: string[];
  /** Requests sent per second at most (a steady attacker); absent = as fast as answers come. */
  ratePerSecond?: number;
}

/** What the flood saw. */
export interface CredentialFloodResult {
  sent: number;
  seconds: number;
  /** Answers by HTTP status ("error" for a failed connection). */
  byStatus: Record<string, number>;
  /** The first answer of each status: its Retry-After and body. */
  samples: Record<string, { retryAfter: string | null; body: string }>;
}

const FLOOD_SCRIPT = String.raw`
import http from 'node:http';
import { randomBytes } from 'node:crypto';
let text = '';
for await (const chunk of process.stdin) text += chunk;
const input = JSON.parse(text);
const agent = new http.Agent({ keepAlive: true, maxSockets: input.concurrency });
const body = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1' } },
});
const byStatus = {};
const samples = {};
let sent = 0;
let next = 0;
const credential = () =>
  input.tokens ? input.tokens[next++ % input.tokens.length] : 'mcph_ak_' + randomBytes(32).toString('base64url');
const one = () => new Promise((resolve) => {
  const req = http.request({
    host: '127.0.0.1', port: input.port, path: '/mcp', method: 'POST', agent,
    headers: {
      host: input.subdomain + '.localhost:' + input.port,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: 'Bearer ' + credential(),
      'x-forwarded-for': input.forwardedFor,
      'content-length': Buffer.byteLength(body),
    },
  }, (res) => {
    let answer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => { if (answer.length < 2048) answer += chunk; });
    res.on('end', () => {
      const status = String(res.statusCode);
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      samples[status] ??= { retryAfter: res.headers['retry-after'] ?? null, body: answer };
      resolve();
    });
  });
  req.on('error', () => { byStatus.error = (byStatus.error ?? 0) + 1; resolve(); });
  req.end(body);
});
const started = performance.now();
const end = Date.now() + input.durationMs;
// A steady attacker sends request n at started + n / rate, whatever the answers' pace.
let scheduled = 0;
const pace = async () => {
  if (!input.ratePerSecond) return;
  const due = started + (scheduled++ * 1000) / input.ratePerSecond;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
};
const worker = async () => { while (Date.now() < end) { await pace(); if (Date.now() >= end) break; await one(); sent += 1; } };
await Promise.all(Array.from({ length: input.concurrency }, worker));
const seconds = (performance.now() - started) / 1000;
agent.destroy();
process.stdout.write(JSON.stringify({ sent, seconds, byStatus, samples }));
`;

/** Runs one flood to its end; resolves with what it saw. */
export function floodCredentials(options: CredentialFloodOptions): Promise<CredentialFloodResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', FLOOD_SCRIPT], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the flood process exited with ${code}`));
      else resolve(JSON.parse(output) as CredentialFloodResult);
    });
    child.stdin.end(JSON.stringify(options));
  });
}
