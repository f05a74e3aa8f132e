/**
 * `npm start -- --demo`: a demo server with tools in the style of the seed's
 * examples, created through the admin API like an operator would.
 */

interface DemoTool {
  name: string;
  body: Record<string, unknown>;
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

/** Creates the demo server (or reuses one called "demo") with its tools. */
export async function createDemoServer(
  adminUrl: string,
  token: string,
): Promise<{ subdomain: string; tools: string[] }> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const created = await fetch(`${adminUrl}/api/servers`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ subdomain: 'demo', name: 'Demo tools' }),
  });
  if (!created.ok && created.status !== 409)
    throw new Error(`creating the demo server failed: ${await created.text()}`);
  for (const tool of DEMO_TOOLS) {
    const saved = await fetch(`${adminUrl}/api/servers/demo/tools/${tool.name}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify(tool.body),
    });
    if (!saved.ok) throw new Error(`saving demo tool ${tool.name} failed: ${await saved.text()}`);
  }
  return { subdomain: 'demo', tools: DEMO_TOOLS.map((t) => t.name) };
}
