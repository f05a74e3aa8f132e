/**
 * How many invocation-log rows each server keeps when the log is pruned.
 * Every server that exists keeps its newest `floor` rows whatever the others
 * log. Above the floors, the log as a whole keeps at most `total` rows, and
 * the servers holding the most give rows up first: one cap C applies to all,
 * the largest for which Σ min(rows, max(floor, C)) ≤ total. A server that
 * floods the log prunes its own history, never another's within its floor,
 * and nobody's beyond what the bound takes. Rows of a server that no longer
 * exists have no floor.
 */

/** Rows to keep per server: `rows` maps each server in the log to its row count. */
export function rowsKeptPerServer(
  rows: ReadonlyMap<string, number>,
  floorOf: (server: string) => number,
  total: number,
): Map<string, number> {
  const servers = [...rows].map(([server, count]) => ({
    server,
    count,
    floor: Math.min(count, floorOf(server)),
  }));
  const keptUnder = (cap: number): number =>
    servers.reduce((sum, each) => sum + Math.min(each.count, Math.max(each.floor, cap)), 0);
  const largest = servers.reduce((most, each) => Math.max(most, each.count), 0);
  let cap = largest;
  if (keptUnder(largest) > total) {
    // keptUnder grows with the cap: the largest cap that fits, by bisection.
    let low = 0;
    let high = largest;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (keptUnder(middle) <= total) low = middle;
      else high = middle - 1;
    }
    cap = low;
  }
  const kept = new Map(
    servers.map((each) => [each.server, Math.min(each.count, Math.max(each.floor, cap))]),
  );
  // A whole-number cap leaves fewer rows unused than servers cut at it: those
  // holding fewest get one more each, so the log keeps exactly `total`.
  let unused = total - [...kept.values()].reduce((sum, rows) => sum + rows, 0);
  const cutAtCap = servers
    .filter((each) => each.count > cap && kept.get(each.server) === cap)
    .sort((a, b) => a.count - b.count || (a.server < b.server ? -1 : 1));
  for (const each of cutAtCap) {
    if (unused <= 0) break;
    kept.set(each.server, cap + 1);
    unused -= 1;
  }
  return kept;
}
