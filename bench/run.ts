/**
 * `npm run bench`: one run, figures and ratios against baselines measured in
 * the same run (raw Docker stdio round trip, raw HTTP round trip, raw SQLite
 * reads). Not a test: nothing here passes or fails on time; the figures go in
 * the README.
 */
import { runHarnessBench } from './harness-bench.js';
import { runRunnerBench } from './runner-bench.js';
import { runMcpBench } from './mcp-bench.js';
import { runManyToolsBench } from './many-tools-bench.js';
import { runStoreBench } from './store-bench.js';
import { runMcpLayerBench } from './mcp-layer-bench.js';
import { runEntriesBench } from './entries-bench.js';
import { runReplicaBench } from './replica-bench.js';

const report = (line: string) => console.log(`  ${line}`);
console.log(`mcphost bench — node ${process.version}, ${new Date().toISOString()}`);
console.log('\nharness (no container):');
await runHarnessBench(report);
console.log('\nstore (embedded SQLite and the configuration cache, no container):');
await runStoreBench(report);
console.log('\nMCP layer (endpoint, transport, SDK server; no container):');
await runMcpLayerBench(report);
console.log('\nrunner (SandboxManager over Docker stdio):');
await runRunnerBench(report);
console.log('\nMCP over HTTP (control plane, real containers):');
await runMcpBench(report);
console.log('\nmany tools (1,000 tools on 100 servers, real control plane and containers):');
await runManyToolsBench(report);
console.log('\nprompts, resources, completions (real control plane and containers):');
await runEntriesBench(report);
console.log(
  '\nreplicas sharing sessions (PostgreSQL) against one replica (real control planes and containers):',
);
await runReplicaBench(report);
process.exit(0);
