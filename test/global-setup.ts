/**
 * Runs once before the suite: builds the harness bundle, the dashboard and the runner image
 * (offline from the host's node, or the pinned LTS node when the host's line
 * is past its end of life, when no registry answers), so every test
 * file finds them ready. MCPHOST_SKIP_RUNNER_SETUP=1 skips this while working
 * on parts that need no runner.
 */
export default async function setup(): Promise<void> {
  // The bundles the control plane reads (assets-setup.ts), skipped or not.
  const { default: buildAssets } = await import('./assets-setup.js');
  await buildAssets();
  if (process.env.MCPHOST_SKIP_RUNNER_SETUP === '1') return;
  const { ensureRunnerImage } = await import('../control-plane/image-build/ensure-runner-image.js');
  const { readSetting } = await import('../control-plane/config.js');
  const image = await ensureRunnerImage({
    base: readSetting('runnerBase'),
    log: (line: string) => console.log(`[runner image] ${line}`),
  });
  process.env.MCPHOST_TEST_RUNNER_IMAGE = image;
}
