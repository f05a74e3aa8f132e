/**
 * `npx tsx test/conformance/provision-node22.ts`: installs (or finds) the
 * Node 22 binary of the conformance test, as `.ci/run` does before the suite,
 * and prints its path and version.
 */
import { provisionNode22 } from './node22.js';

const { binary, version } = await provisionNode22();
console.log(`Node ${version} for the conformance suite: ${binary}`);
