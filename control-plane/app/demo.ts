/**
 * `npm start -- --demo`: a demo server with tools in the style of the seed's
 * examples. The process owns its store, so it needs no admin token (which an
 * earlier start may have generated and shown once): it writes through the
 * store with the checks the admin API applies to the same requests (the
 * store's schemas, which are the API's, and the syntax check), and the audit
 * log names the demo as the actor, not a user.
 */
import { checkToolSyntax } from '../../src/tool-code/index.js';
import { isMcphostError, McphostError } from '../errors.js';
import type { AuditActor, ConfigCache, Store, ToolDefinitionInput } from '../store/index.js';

/** The demo server's subdomain. */
export const DEMO_SUBDOMAIN = 'demo';

/** Who the audit log says made the demo: the service itself, on the operator's command line. */
const DEMO_ACTOR: AuditActor = { kind: 'bootstrap', id: null, label: 'npm start -- --demo' };

interface DemoTool {
  name: string;
  body: ToolDefinitionInput;
}

const DEMO_TOOLS: DemoTool[] = [
  {
    name: 'greet',
    body: {
      description: 'Greets someone by name.',
      parameters: [
        { name: 'name', type: 'string', required: true, description: 'Who to greet' },
        { name: 'excited', type: 'boolean', required: false },
      ],
      code: "console.log('greeting', params.name);\nreturn `Hello, ${params.name}${params.excited ? '!' : '.'}`;",
    },
  },
  {
    name: 'sales_summary',
    body: {
      description: 'Totals sales by region with lodash.',
      parameters: [
        { name: 'sales', type: 'array', required: true, description: 'Items {region, amount}' },
      ],
      code: [
        'const byRegion = sdk.lodash.groupBy(params.sales, "region");',
        'return sdk.lodash.mapValues(byRegion, (rows) => sdk.lodash.sumBy(rows, "amount"));',
      ].join('\n'),
    },
  },
  {
    name: 'send_webhook',
    body: {
      description:
        'POSTs {event, data, timestamp} as JSON to a URL with the X-Webhook-Secret header.',
      parameters: [
        { name: 'url', type: 'string', required: true },
        { name: 'event', type: 'string', required: true },
        { name: 'data', type: 'object', required: false },
      ],
      secrets: ['WEBHOOK_SECRET'],
      code: [
        'const response = await sdk.http({',
        '  method: "POST",',
        '  url: params.url,',
        '  headers: { "Content-Type": "application/json", "X-Webhook-Secret": env.WEBHOOK_SECRET ?? "" },',
        '  body: JSON.stringify({ event: params.event, data: params.data ?? {}, timestamp: new Date().toISOString() }),',
        '});',
        'return { status: response.status(), body: response.body() };',
      ].join('\n'),
    },
  },
];

/** What the demo start did. */
export interface DemoOutcome {
  subdomain: string;
  /** Every demo tool's name. */
  tools: string[];
  /** False when a server called "demo" was there already (its tools are then left as they are, missing ones added). */
  createdServer: boolean;
}

/** What the demo needs of the running service. */
export interface DemoServices {
  store: Store;
  cache: ConfigCache;
}

/**
 * Creates the demo server with its tools, or completes one called "demo"
 * that lacks some of them; a tool that exists is left as its operator left
 * it. Throws what the admin API would answer for the same requests.
 */
export async function createDemoServer({ store, cache }: DemoServices): Promise<DemoOutcome> {
  const audit = (action: string, target: string | null, after: unknown) =>
    store.appendAudit({
      actor: DEMO_ACTOR,
      action,
      server: DEMO_SUBDOMAIN,
      target,
      outcome: 'ok',
      clientAddress: null,
      requestId: null,
      summary: { after },
    });
  let createdServer = false;
  if ((await store.getServer(DEMO_SUBDOMAIN)) === undefined) {
    try {
      await store.createServer({ subdomain: DEMO_SUBDOMAIN, name: 'Demo tools' });
      createdServer = true;
      await audit('server.create', null, { subdomain: DEMO_SUBDOMAIN, name: 'Demo tools' });
    } catch (error) {
      // Another replica made it at the same moment: the same outcome.
      if (!isMcphostError(error, 'ERR_CONFLICT')) throw error;
    }
  }
  for (const tool of DEMO_TOOLS) {
    if ((await store.getTool(DEMO_SUBDOMAIN, tool.name)) !== undefined) continue;
    const problem = checkToolSyntax(tool.body.code);
    if (problem) {
      throw new McphostError(
        'ERR_TOOL_SYNTAX',
        `demo tool ${tool.name}: syntax error at line ${problem.line}, column ${problem.column}: ${problem.message}`,
      );
    }
    const saved = await store.saveTool(DEMO_SUBDOMAIN, tool.name, tool.body);
    await audit('tool.save', tool.name, { name: tool.name, version: saved.version });
  }
  // Served by this process before the banner names it.
  await cache.settled();
  return { subdomain: DEMO_SUBDOMAIN, tools: DEMO_TOOLS.map((t) => t.name), createdServer };
}
