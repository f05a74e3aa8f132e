/**
 * A fixed list of completion values ranked against what the user typed:
 * values starting with it (same case first, then ignoring case), then values
 * containing it ignoring case, each group in the list's order. MCP answers at
 * most 100 values, with the total and whether there are more.
 */

/** The most values one `completion/complete` answers (MCP's limit). */
export const MAX_COMPLETION_ANSWER = 100;

export interface Completion {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

export function rankCompletions(values: readonly string[], typed: string): Completion {
  const lower = typed.toLowerCase();
  const groups: string[][] = [[], [], []];
  for (const value of values) {
    if (value.startsWith(typed)) groups[0]!.push(value);
    else if (value.toLowerCase().startsWith(lower)) groups[1]!.push(value);
    else if (value.toLowerCase().includes(lower)) groups[2]!.push(value);
  }
  return bounded(groups.flat());
}

/** At most MAX_COMPLETION_ANSWER values, with `total` and `hasMore` saying what was left out. */
export function bounded(values: string[], total = values.length, hasMore?: boolean): Completion {
  const shown = values.slice(0, MAX_COMPLETION_ANSWER);
  return {
    values: shown,
    total: Math.max(total, shown.length),
    hasMore: hasMore ?? total > shown.length,
  };
}
