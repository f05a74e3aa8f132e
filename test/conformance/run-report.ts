/**
 * A conformance run as text for the test log: one line per scenario with its
 * outcome, whether it is required, and what its failing checks said.
 * Deliberately never a line of the form "N passed, N failed": CI reads such
 * a line as the closing count of a whole test run.
 */
import type { ConformanceRun, ScenarioVerdict } from './conformance-cli.js';
import {
  NOT_REQUIRED_SCENARIOS,
  REQUIRED_SCENARIOS,
  REQUIRED_SUCCESSES,
  type RequirementSet,
} from './scenarios.js';

const VERDICT_LABELS: Record<ScenarioVerdict, string> = {
  pass: 'pass',
  fail: 'FAIL',
  'nothing-checked': 'NO VERDICT',
};

/** The failures of required scenarios, one string each (empty when all pass). */
export function requiredFailures(run: ConformanceRun, set: RequirementSet): string[] {
  return REQUIRED_SCENARIOS[set].flatMap((scenario) => {
    const outcome = run.outcomes.get(scenario);
    if (!outcome) {
      return [
        run.listed.includes(scenario)
          ? `${scenario}: the CLI wrote no result for it`
          : `${scenario}: not a scenario of this requirement set`,
      ];
    }
    return outcome.verdict === 'pass' ? [] : [`${scenario}: ${outcome.problems.join(' | ')}`];
  });
}

/**
 * The checks REQUIRED_SUCCESSES names that did not report SUCCESS, as
 * `scenario: check is STATUS` (empty when all did).
 */
export function missingSuccesses(run: ConformanceRun, set: RequirementSet): string[] {
  return Object.entries(REQUIRED_SUCCESSES[set]).flatMap(([scenario, checkIds]) => {
    const checks = run.outcomes.get(scenario)?.checks ?? [];
    return checkIds.flatMap((id) => {
      const check = checks.find((candidate) => candidate.id === id);
      if (check?.status === 'SUCCESS') return [];
      const said = check?.errorMessage ? `: ${check.errorMessage.replace(/\s*\n\s*/g, ' ⏎ ')}` : '';
      return [`${scenario}: ${id} is ${check?.status ?? 'absent'}${said}`];
    });
  });
}

/** Scenarios a run lists that scenarios.ts neither requires nor excuses. */
export function unclassified(run: ConformanceRun, set: RequirementSet): string[] {
  return run.listed.filter(
    (scenario) =>
      !REQUIRED_SCENARIOS[set].includes(scenario) && !(scenario in NOT_REQUIRED_SCENARIOS[set]),
  );
}

/** How many scenarios of a list passed, as `x of y`. */
function tally(run: ConformanceRun, scenarios: readonly string[]): string {
  const passing = scenarios.filter((scenario) => run.outcomes.get(scenario)?.verdict === 'pass');
  return `${passing.length} of ${scenarios.length}`;
}

export function formatRun(label: string, run: ConformanceRun, set: RequirementSet): string {
  const lines = [
    `${label}, --requirements ${set}: ${run.listed.length} server scenarios in ${run.durationMs} ms ` +
      `(CLI exit ${run.exitCode}); required ${tally(run, REQUIRED_SCENARIOS[set])} pass, ` +
      `scored by the suite ${tally(run, run.listing.scored)} pass`,
  ];
  for (const scenario of run.listed) {
    const outcome = run.outcomes.get(scenario);
    const verdict = outcome ? VERDICT_LABELS[outcome.verdict] : 'NO RESULT';
    const suiteRole = run.listing.notScored.has(scenario)
      ? `not scored: ${run.listing.notScored.get(scenario)}`
      : 'scored';
    const role = REQUIRED_SCENARIOS[set].includes(scenario)
      ? `required (suite: ${suiteRole})`
      : `not required (suite: ${suiteRole}; ${NOT_REQUIRED_SCENARIOS[set][scenario] ?? 'not classified'})`;
    lines.push(`  ${verdict.padEnd(10)} ${scenario} — ${role}`);
    for (const problem of outcome?.problems ?? []) lines.push(`      ${problem}`);
  }
  const missing = missingSuccesses(run, set);
  if (missing.length > 0) {
    lines.push('  checks that must report SUCCESS and did not:');
    for (const line of missing) lines.push(`      ${line}`);
  }
  return lines.join('\n');
}
