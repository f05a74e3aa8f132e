/**
 * Runs once before the suite: bundles the harness and the dashboard into
 * dist/ (what `npm start` builds before it starts), since the control plane
 * only reads them. A no-op when they are newer than their sources.
 */
export default async function setup(): Promise<void> {
  const { buildHarness } = await import('../scripts/build-harness.js');
  const { buildDashboard } = await import('../scripts/build-dashboard.js');
  await buildHarness();
  await buildDashboard();
}
