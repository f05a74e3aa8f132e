/**
 * Runs the official MCP conformance CLI (`conformance server`) from an
 * installed npm package under a chosen Node binary, and reads its results.
 *
 * One CLI run covers one requirement set (`--requirements <revision>`): the
 * scenarios that revision scores, then the ones it only reports (extensions,
 * pending, added after release), all at that revision's wire version.
 * `--output-dir` makes it write one `server-{scenario}-{timestamp}/checks.json`
 * per scenario, which is what we read — the same checks its summary counts.
 * A scenario passes, as the CLI judges it, when none of its checks is a
 * FAILURE; we also require at least one SUCCESS, so a scenario that checked
 * nothing never counts as passed.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
  /** The npm name it is installed under. */
  installedAs: string;
  version: string;
  /** The CLI's entry file (`bin.conformance`). */
  cli: string;
}

/** The server scenarios of one requirement set, as `list --server --requirements` gives them. */
export interface RequirementSetListing {
  /** Scored: the revision requires them. */
  scored: string[];
  /** Run and reported but never scored, with the suite's reason (`extension`, `pending`…). */
  notScored: Map<string, string>;
}

/** One full run of the server suite for one requirement set. */
export interface ConformanceRun {
  requirements: string;
  outcomes: Map<string, ScenarioOutcome>;
  /** Every server scenario the run covers: the scored ones, then the others. */
  listed: string[];
  /** The suite's own split of `listed`. */
  listing: RequirementSetListing;
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

/**
 * The server scenarios of a requirement set, from `list --server --requirements`:
 * the scored ones under "Server scenarios", one `  - name` a line; the others
 * under "Run and reported, but never scored", as `    - name [server]` below
 * a `  reason (n):` line.
 */
export async function listServerScenarios(
  node: string,
  pkg: ConformancePackage,
  requirements: string,
): Promise<RequirementSetListing> {
  const { exitCode, output } = await runNode(
    node,
    [pkg.cli, 'list', '--server', '--requirements', requirements],
    60_000,
  );
  const scored: string[] = [];
  const notScored = new Map<string, string>();
  let section: 'server' | 'not-scored' | undefined;
  let reason = '';
  for (const line of output.split('\n')) {
    if (/^Server scenarios/.test(line)) section = 'server';
    else if (/^Run and reported, but never scored/.test(line)) section = 'not-scored';
    else if (/^\S/.test(line)) section = undefined;
    if (section === 'server') {
      const item = /^ {2}- (\S+)\s*$/.exec(line);
      if (item) scored.push(item[1]!);
    } else if (section === 'not-scored') {
      const heading = /^ {2}(\S[^(]*?) \(\d+\):$/.exec(line);
      if (heading) reason = heading[1]!;
      const item = /^ {4}- (\S+) \[server\]$/.exec(line);
      if (item) notScored.set(item[1]!, reason);
    }
  }
  if (exitCode !== 0 || scored.length === 0) {
    throw new Error(
      `conformance ${pkg.version} (${pkg.cli}) under ${node} listed no server scenarios ` +
        `for --requirements ${requirements} (exit ${exitCode}):\n${output}`,
    );
  }
  return { scored, notScored };
}

/** `server-{scenario}-{ISO time with : and . as -}` (the CLI's result folder name). */
const RESULT_FOLDER = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

/** Longest text of one problem line, in characters; the checks.json holds the rest. */
const PROBLEM_MAX_CHARS = 600;

/** What a check said, on one line and at most PROBLEM_MAX_CHARS long. */
function said(check: ConformanceCheck): string {
  const text = (check.errorMessage ?? check.description).replace(/\s*\n\s*/g, ' ⏎ ');
  return text.length <= PROBLEM_MAX_CHARS
    ? text
    : `${text.slice(0, PROBLEM_MAX_CHARS)}… (${text.length - PROBLEM_MAX_CHARS} more characters)`;
}

function outcomeOf(scenario: string, checks: ConformanceCheck[]): ScenarioOutcome {
  const failures = checks.filter((check) => check.status === 'FAILURE');
  const warnings = checks.filter((check) => check.status === 'WARNING');
  const successes = checks.filter((check) => check.status === 'SUCCESS');
  const problems = [
    ...failures.map((check) => `${check.id}: ${said(check)}`),
    ...warnings.map((check) => `WARNING ${check.id}: ${said(check)}`),
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

/**
 * The check standing for a scenario that threw before writing its
 * checks.json (the CLI then prints `Failed to run scenario {name}: {error}`
 * and counts it as a FAILURE), with the CLI's words when it printed them.
 */
function abortedScenario(scenario: string, output: string): ConformanceCheck {
  const marker = `Failed to run scenario ${scenario}:`;
  const at = output.indexOf(marker);
  const said =
    at < 0
      ? ''
      : output
          .slice(at + marker.length)
          .split('\n')[0]!
          .trim();
  return {
    id: scenario,
    name: scenario,
    description: 'Failed to run scenario',
    status: 'FAILURE',
    errorMessage: `the scenario ended before writing its checks.json${said ? `: ${said}` : ''}`,
  };
}

/**
 * Runs every server scenario of one requirement set (`requirements`, such as
 * `2026-07-28`) of `pkg` under `node` against `url` (a `/mcp` address).
 */
export async function runConformanceSuite(
  node: string,
  pkg: ConformancePackage,
  url: string,
  requirements: string,
): Promise<ConformanceRun> {
  const started = Date.now();
  const listing = await listServerScenarios(node, pkg, requirements);
  const outputDir = mkdtempSync(join(tmpdir(), 'mcphost-conformance-'));
  try {
    const { exitCode, output } = await runNode(
      node,
      [pkg.cli, 'server', '--url', url, '--requirements', requirements, '--output-dir', outputDir],
      RUN_TIMEOUT_MS,
    );
    const outcomes = new Map<string, ScenarioOutcome>();
    for (const folder of readdirSync(outputDir)) {
      const scenario = RESULT_FOLDER.exec(folder)?.[1];
      if (scenario === undefined) continue;
      const checksFile = join(outputDir, folder, 'checks.json');
      const checks = existsSync(checksFile)
        ? (JSON.parse(readFileSync(checksFile, 'utf8')) as ConformanceCheck[])
        : [abortedScenario(scenario, output)];
      outcomes.set(scenario, outcomeOf(scenario, checks));
    }
    return {
      requirements,
      outcomes,
      listed: [...listing.scored, ...listing.notScored.keys()],
      listing,
      exitCode,
      output,
      durationMs: Date.now() - started,
    };
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}
