/**
 * Building Docker images — not sandboxing: the runner image the sandbox runs
 * (content-addressed, from the Node image or offline from this machine's
 * node), and the parts `scripts/control-plane-image.ts` shares to build the
 * control plane's own image.
 */
export { ensureRunnerImage, RunnerBase } from './ensure-runner-image.js';
export { packBuildContext, type ContextEntry } from './build-context.js';
export { buildImage, messageOf } from './image-builds.js';
export { ensureLocalNodeBase, listSharedLibraries, localNodeBaseTag } from './local-node-base.js';
export { defaultHarnessDir, findRepoRoot } from './repo-paths.js';
export { RUNNER_USER } from './runner-user.js';
