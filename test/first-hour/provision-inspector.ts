/**
 * `npx tsx test/first-hour/provision-inspector.ts`: installs (or finds) the
 * MCP Inspector and the Node 22 that runs it, as the quick-start test does,
 * so a CI machine can fetch them before the suite; prints where they are.
 */
import { INSPECTOR_VERSION, provisionInspector } from './inspector-cli.js';

const { node, script } = await provisionInspector();
console.log(`MCP Inspector ${INSPECTOR_VERSION}: ${node} ${script}`);
