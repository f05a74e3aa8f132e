/**
 * Runs the official MCP conformance CLI (`conformance server`) from an
 * installed npm package under a chosen Node binary, and reads its results.
 *
 * One CLI run covers every server scenario (`--suite all`, which includes the
 * pending ones such as `json-schema-2020-12`); `--output-dir` makes it write
 * one `server-{scenario}-{timestamp}/checks.json` per scenario, which is what
 * we read — the same checks its summary counts. A scenario passes, as the CLI
 * judges it, when none of its checks is a FAILURE; we also require at least
 * one SUCCESS, so a scenario that checked nothing never counts as passed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** One check as the CLI writes it in checks.json. */
export interface ConformanceCheck {
  id: string;
  name: string;
  description: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  details?: unknown;
}

/**
 * What one scenario came to: `nothing-checked` when it reported only INFO or
 * WARNING checks (the CLI counts that as passed; we do not).
 */
export type ScenarioVerdict = 'pass' | 'fail' | 'nothing-checked';

export interface ScenarioOutcome {
  scenario: string;
  verdict: ScenarioVerdict;
  checks: ConformanceCheck[];
  /** `id: message` of every FAILURE, then of every WARNING (`WARNING id: message`). */
  problems: string[];
}

/** An installed conformance package. */
export interface ConformancePackage {
  /** The npm name it is installed under (an alias for the second version). */
  installedAs: string;
  version: string;
  /** The CLI's entry file (`bin.conformance`). */
  cli: string;
}

/** One full run of the server suite. */
export interface ConformanceRun {
  outcomes: Map<string, ScenarioOutcome>;
  /** Every server scenario the CLI lists. */
  listed: string[];
  exitCode: number | null;
  output: string;
  durationMs: number;
}

/** How long one run of the whole suite may take, in ms, before it is killed. */
const RUN_TIMEOUT_MS = 420_000;

const require = createRequire(import.meta.url);

/** Finds an installed conformance package; throws a clear error when it is missing. */
export function locateConformancePackage(installedAs: string): ConformancePackage {
  let manifestPath: string;
  try {
    manifestPath = require.resolve(`${installedAs}/package.json`);
  } catch {
    throw new Error(
      `the npm package ${installedAs} is not installed (a devDependency in package.json): run npm ci`,
    );
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    version: string;
    bin: { conformance: string };
  };
  return {
    installedAs,
    version: manifest.version,
    cli: join(dirname(manifestPath), manifest.bin.conformance),
  };
}

interface ProcessResult {
  exitCode: number | null;
  output: string;
}

function runNode(node: string, args: string[], timeoutMs: number): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (exitCode, signal) =>
      resolve({
        exitCode,
        output: signal ? `${output}\n[killed with ${signal} after ${timeoutMs} ms]` : output,
      }),
    );
  });
}

/** The server scenarios the CLI lists (`list --server`: lines `  - name [versions]`). */
export async function listServerScenarios(
  node: string,
  pkg: ConformancePackage,
): Promise<string[]> {
  const { exitCode, output } = await runNode(node, [pkg.cli, 'list', '--server'], 60_000);
  const scenarios: string[] = [];
  let inServerSection = false;
  for (const line of output.split('\n')) {
    if (/^Server scenarios/.test(line)) inServerSection = true;
    else if (/^\S/.test(line)) inServerSection = false;
    const item = inServerSection ? /^\s+- (\S+)/.exec(line) : null;
    if (item) scenarios.push(item[1]!);
  }
  if (exitCode !== 0 || scenarios.length === 0) {
    throw new Error(
      `conformance ${pkg.version} (${pkg.cli}) under ${node} listed no server scenarios ` +
        `(exit ${exitCode}):\n${output}`,
    );
  }
  return scenarios;
}

/** `server-{scenario}-{ISO time with : and . as -}` (the CLI's result folder name). */
const RESULT_FOLDER = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

function outcomeOf(scenario: string, checks: ConformanceCheck[]): ScenarioOutcome {
  const failures = checks.filter((check) => check.status === 'FAILURE');
  const warnings = checks.filter((check) => check.status === 'WARNING');
  const successes = checks.filter((check) => check.status === 'SUCCESS');
  const problems = [
    ...failures.map((check) => `${check.id}: ${check.errorMessage ?? check.description}`),
    ...warnings.map((check) => `WARNING ${check.id}: ${check.errorMessage ?? check.description}`),
  ];
  const verdict: ScenarioVerdict =
    failures.length > 0 ? 'fail' : successes.length > 0 ? 'pass' : 'nothing-checked';
  if (verdict === 'nothing-checked') {
    problems.push(
      `no check succeeded or failed (${checks.map((check) => `${check.status} ${check.id}`).join(', ')})`,
    );
  }
  return { scenario, verdict, checks, problems };
}

/** Runs every server scenario of `pkg` under `node` against `url` (a `/mcp` address). */
export async function runConformanceSuite(
  node: string,
  pkg: ConformancePackage,
  url: string,
): Promise<ConformanceRun> {
  const started = Date.now();
  const listed = await listServerScenarios(node, pkg);
  const outputDir = mkdtempSync(join(tmpdir(), 'mcphost-conformance-'));
  try {
    const { exitCode, output } = await runNode(
      node,
      [pkg.cli, 'server', '--url', url, '--suite', 'all', '--output-dir', outputDir],
      RUN_TIMEOUT_MS,
    );
    const outcomes = new Map<string, ScenarioOutcome>();
    for (const folder of readdirSync(outputDir)) {
      const scenario = RESULT_FOLDER.exec(folder)?.[1];
      if (scenario === undefined) continue;
      const checks = JSON.parse(
        readFileSync(join(outputDir, folder, 'checks.json'), 'utf8'),
      ) as ConformanceCheck[];
      outcomes.set(scenario, outcomeOf(scenario, checks));
    }
    return { outcomes, listed, exitCode, output, durationMs: Date.now() - started };
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}
