/**
 * A conformance run as text for the test log: one line per scenario with its
 * outcome, whether it is required, and what its failing checks said.
 * Deliberately never a line of the form "N passed, N failed": CI reads such
 * a line as the closing count of a whole test run.
 */
import type { ConformanceRun, ScenarioVerdict } from './conformance-cli.js';
import { NOT_REQUIRED_SCENARIOS, REQUIRED_SCENARIOS } from './scenarios.js';

const VERDICT_LABELS: Record<ScenarioVerdict, string> = {
  pass: 'pass',
  fail: 'FAIL',
  'nothing-checked': 'NO VERDICT',
};

/** The failures of required scenarios, one string each (empty when all pass). */
export function requiredFailures(run: ConformanceRun): string[] {
  return REQUIRED_SCENARIOS.flatMap((scenario) => {
    const outcome = run.outcomes.get(scenario);
    if (!outcome) {
      return [
        run.listed.includes(scenario)
          ? `${scenario}: the CLI wrote no result for it`
          : `${scenario}: not a scenario of this version`,
      ];
    }
    return outcome.verdict === 'pass' ? [] : [`${scenario}: ${outcome.problems.join(' | ')}`];
  });
}

export function formatRun(label: string, run: ConformanceRun): string {
  const lines = [`${label}: ${run.listed.length} server scenarios in ${run.durationMs} ms`];
  for (const scenario of run.listed) {
    const outcome = run.outcomes.get(scenario);
    const verdict = outcome ? VERDICT_LABELS[outcome.verdict] : 'NO RESULT';
    const role = REQUIRED_SCENARIOS.includes(scenario)
      ? 'required'
      : `not required (${NOT_REQUIRED_SCENARIOS[scenario] ?? 'not classified'})`;
    lines.push(`  ${verdict.padEnd(10)} ${scenario} — ${role}`);
    for (const problem of outcome?.problems ?? []) lines.push(`      ${problem}`);
  }
  return lines.join('\n');
}
