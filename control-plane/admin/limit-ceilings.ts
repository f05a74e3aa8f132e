/**
 * Limits are ceilings set from above (`sandbox/limits.ts`): the host's
 * TOOL_MAX_* bound a server's limits, which an admin sets; a server's bound
 * its tools', prompts' and resources', which its operator sets. A save above
 * a ceiling is refused here, before anything is stored, with
 * ERR_LIMIT_ABOVE_CEILING naming each value and the ceiling it exceeds.
 *
 * What was saved before a ceiling was lowered stays as it was written (an
 * operator's definition is never rewritten behind their back) and runs at the
 * ceilings in force: the views add `effectiveLimits` (what an invocation runs
 * with now) and `limitsClamped` (the fields the ceilings lower).
 */
import { CONFIG_TABLE } from '../config.js';
import { McphostError } from '../errors.js';
import {
  ceilingProblems,
  OWN_LIMIT_FIELDS,
  type CeilingProblem,
  type OwnLimits,
} from '../sandbox/index.js';
import type { AdminContext } from './admin-context.js';

/** The host settings that set each ceiling. */
const HOST_SETTING = {
  memoryMb: CONFIG_TABLE.toolMaxMemoryMb.env,
  timeoutMs: CONFIG_TABLE.toolMaxTimeoutMs.env,
} as const;

const UNIT = { memoryMb: 'MiB', timeoutMs: 'ms' } as const;

/** A record with the limits it runs with now. */
export type WithEffectiveLimits<T> = T & {
  /** What an invocation runs with now: the saved limits under every ceiling in force. */
  effectiveLimits: Required<OwnLimits>;
  /** Fields saved above a ceiling lowered since (they run at the ceiling). */
  limitsClamped: (typeof OWN_LIMIT_FIELDS)[number][];
};

/**
 * Refuses `requested` when a value is above its ceiling: the host's, and for
 * a tool, prompt or resource of `server` also the server's own limits.
 * `what` names the record in the message (`tool "report"`).
 */
export function requireWithinCeilings(
  context: AdminContext,
  what: string,
  requested: OwnLimits,
  server?: { subdomain: string; limits: OwnLimits },
): void {
  const problems = ceilingProblems(requested, hostCeilings(context), server?.limits);
  if (problems.length === 0) return;
  const described = problems.map((problem) => describe(problem, server?.subdomain));
  throw new McphostError(
    'ERR_LIMIT_ABOVE_CEILING',
    `${what} asks for more than its ceilings allow: ${described.join('; ')}`,
    {
      details: problems.map((problem) => ({
        ...problem,
        ...(problem.setBy === 'host' ? { setting: HOST_SETTING[problem.field] } : {}),
      })),
    },
  );
}

/** `record` with the limits it runs with on a server with `serverLimits` (undefined: the server's own). */
export function withEffectiveLimits<T extends { limits: OwnLimits }>(
  context: AdminContext,
  record: T,
  serverLimits?: OwnLimits,
): WithEffectiveLimits<T> {
  const effective = context.pools.effectiveLimits(
    serverLimits === undefined ? undefined : record.limits,
    serverLimits ?? record.limits,
  );
  const effectiveLimits = { memoryMb: effective.memoryMb, timeoutMs: effective.timeoutMs };
  const limitsClamped = OWN_LIMIT_FIELDS.filter(
    (field) => record.limits[field] !== undefined && record.limits[field] > effectiveLimits[field],
  );
  return { ...record, effectiveLimits, limitsClamped };
}

/** True when `limits` ask for more than a server with `serverLimits` and the host allow now. */
export function aboveCeilings(
  context: AdminContext,
  limits: OwnLimits,
  serverLimits: OwnLimits,
): boolean {
  return ceilingProblems(limits, hostCeilings(context), serverLimits).length > 0;
}

function hostCeilings(context: AdminContext) {
  return context.pools.budgetStats().limitCeilings;
}

function describe(problem: CeilingProblem, subdomain: string | undefined): string {
  const { field, requested, ceiling } = problem;
  const by =
    problem.setBy === 'server'
      ? `the limit an admin set for server "${subdomain}"`
      : `the host's ceiling (${HOST_SETTING[field]})`;
  return `${field} ${requested} is above ${ceiling} ${UNIT[field]}, ${by}`;
}
