/**
 * Diagnostic fixture tools whose names the 2026-07-28 scenarios hard-code:
 * `server-stateless` (SEP-2575: an undeclared capability, no log lines
 * without `logLevel`, no server→client request on a response stream,
 * list_changed on `subscriptions/listen`), `http-custom-header-server-validation`
 * (SEP-2243 `x-mcp-header`) and the tasks extension's sync-path tools
 * (SEP-2663). All tool code, as a tool author would write it.
 */
import { ASKING_LIMITS } from './fixture-input-tools.js';
import type { FixtureContext, FixtureTool } from './fixture-tools.js';

/** The secret holding an admin token, for the fixtures that save through the admin API. */
export const ADMIN_TOKEN_SECRET = 'ADMIN_TOKEN';

/** The tool the tools-list-changed trigger saves again, so tools/list changes. */
export const LIST_CHANGED_PROBE_TOOL = 'test_list_changed_probe';
/** The prompt the prompts-list-changed trigger saves again. */
export const LIST_CHANGED_PROBE_PROMPT = 'test_list_changed_probe_prompt';

/**
 * Tool code that saves one entry through the admin API with `fetch`, as an
 * operator's automation would: the save is what makes mcphost announce
 * `notifications/{tools|prompts}/list_changed` on every open listen stream.
 * The description changes with every save so the list really changes.
 */
function savingThroughAdminApi(context: FixtureContext, path: string, body: string): string {
  const url = `${context.adminUrl}/api/servers/${context.subdomain}/${path}`;
  return `const response = await fetch(${JSON.stringify(url)}, {
  method: 'PUT',
  headers: { authorization: 'Bearer ' + env.${ADMIN_TOKEN_SECRET}, 'content-type': 'application/json' },
  body: JSON.stringify(${body}),
});
if (!response.ok) throw new Error('the admin API answered ' + response.status + ': ' + (await response.text()));`;
}

export function diagnosticTools(context: FixtureContext): FixtureTool[] {
  return [...statelessTools(context), customHeaderTool(), ...tasksTools()];
}

/** `server-stateless` (2026-07-28). */
function statelessTools(context: FixtureContext): FixtureTool[] {
  const saved = (what: string) => `'Saved by ${what} at ' + new Date().toISOString()`;
  return [
    {
      // Called with empty clientCapabilities: asking for sampling is then
      // MissingRequiredClientCapability (-32021, HTTP 400, data.requiredCapabilities
      // {sampling: {}}), not a result
      name: 'test_missing_capability',
      body: {
        description: 'Needs the sampling capability of its client.',
        code: `await sdk.sample(
  { messages: [{ role: 'user', content: { type: 'text', text: 'Reply with the single word: pong' } }], maxTokens: 16 },
  { key: 'llm_answer' },
);
return 'sampling round-trip complete';`,
        limits: ASKING_LIMITS,
      },
    },
    {
      // Called with clientCapabilities {elicitation: {}}: the response stream may carry
      // the input_required result, never an elicitation/create request of its own
      name: 'test_streaming_elicitation',
      body: {
        description: 'Elicits; its response stream carries results only, never a request.',
        code: `const answer = await sdk.elicit('Streaming elicitation check', {
  type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'],
}, { key: 'stream_check' });
return 'stream observed: ' + answer.action;`,
        limits: ASKING_LIMITS,
      },
    },
    {
      // Called without _meta logLevel: no notifications/message may reach the client,
      // and the result must arrive within 500 ms
      name: 'test_logging_tool',
      body: {
        description: 'Logs a line; it reaches the client only when the request set a logLevel.',
        code: `console.info('test_logging_tool ran (delivered only when the request set a logLevel)');
return 'logged through the request-scoped, logLevel-gated channel';`,
      },
    },
    {
      name: LIST_CHANGED_PROBE_TOOL,
      body: {
        description: 'Saved again by test_trigger_tool_change.',
        code: "return 'probe';",
      },
    },
    {
      // Saves the probe tool through the admin API while a subscriptions/listen stream is
      // open: notifications/tools/list_changed on streams that asked for toolsListChanged
      name: 'test_trigger_tool_change',
      body: {
        description: 'Saves a tool of this server through the admin API (tools/list changes).',
        secrets: [ADMIN_TOKEN_SECRET],
        code: `${savingThroughAdminApi(
          context,
          `tools/${LIST_CHANGED_PROBE_TOOL}`,
          `{ description: ${saved('test_trigger_tool_change')}, code: "return 'probe';" }`,
        )}
return 'tools_list_changed published';`,
      },
    },
    {
      // The same for prompts: notifications/prompts/list_changed
      name: 'test_trigger_prompt_change',
      body: {
        description: 'Saves a prompt of this server through the admin API (prompts/list changes).',
        secrets: [ADMIN_TOKEN_SECRET],
        code: `${savingThroughAdminApi(
          context,
          `prompts/${LIST_CHANGED_PROBE_PROMPT}`,
          `{ description: ${saved('test_trigger_prompt_change')}, messages: [{ role: 'user', content: { type: 'text', text: 'probe' } }] }`,
        )}
return 'prompts_list_changed published';`,
      },
    },
  ];
}

/**
 * `http-custom-header-server-validation` (2026-07-28, pending upstream): a
 * string argument annotated `x-mcp-header` (SEP-2243), which a client mirrors
 * into `Mcp-Param-Region` and the server checks against the body.
 */
function customHeaderTool(): FixtureTool {
  return {
    name: 'test_x_mcp_header',
    body: {
      description: 'Echoes its region, which clients also send as the Mcp-Param-Region header.',
      inputSchema: {
        type: 'object',
        properties: {
          region: {
            type: 'string',
            description: 'mirrored into Mcp-Param-Region',
            'x-mcp-header': 'Region',
          },
          level: { type: 'integer', description: 'non-mirrored argument' },
        },
      },
      code: "return 'region=' + (params.region ?? '<none>');",
    },
  };
}

/**
 * The tools the tasks scenarios (SEP-2663, an extension mcphost does not
 * implement) name, with their synchronous behaviour. Whether a tool
 * supports tasks is not something a tool can declare today, and without
 * tasks every call is synchronous, so `slow_compute` sleeps at most 3 s of
 * the up to 60 s the scenarios ask for: the run stays short and the
 * scenarios still show how far a tasks client gets.
 */
function tasksTools(): FixtureTool[] {
  const sleep = 'const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));';
  return [
    {
      name: 'greet',
      body: {
        description: 'Greets by name (sync only).',
        parameters: [{ name: 'name', type: 'string', required: false }],
        code: "return 'Hello, ' + (params.name ?? 'World') + '!';",
      },
    },
    {
      name: 'slow_compute',
      body: {
        description: 'Sleeps for the given seconds (at most 3 here), then answers.',
        parameters: [
          { name: 'seconds', type: 'number', required: false },
          { name: 'label', type: 'string', required: false },
        ],
        code: `${sleep}
await sleep(Math.min(params.seconds ?? 0, 3) * 1000);
return 'computed ' + (params.label ?? '') + ' after ' + (params.seconds ?? 0) + ' s';`,
      },
    },
    {
      name: 'failing_job',
      body: {
        description: 'Fails with a tool error after about a second.',
        code: `${sleep}
await sleep(1000);
throw new Error('failing_job always fails');`,
      },
    },
    {
      // A result MCP cannot carry (a BigInt) fails on the host's side, not in the tool:
      // the nearest tool code gets to a protocol-level failure
      name: 'protocol_error_job',
      body: {
        description: 'Returns something no result can carry.',
        code: 'return { total: 1n };',
      },
    },
    {
      // Sorts first in tools/list, so http-header-validation calls it with {}: it answers
      // at once then, without asking
      name: 'confirm_delete',
      body: {
        description: 'Asks for a confirmation before pretending to delete a file.',
        parameters: [{ name: 'filename', type: 'string', required: false }],
        code: `if (params.filename === undefined) throw new Error('filename is required');
const answer = await sdk.elicit('Delete ' + params.filename + '?', {
  type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'],
});
return answer.action === 'accept' && answer.content.confirm ? 'Deleted ' + params.filename : 'Kept ' + params.filename;`,
        limits: ASKING_LIMITS,
      },
    },
    {
      name: 'multi_input',
      body: {
        description: 'Asks two questions at once.',
        code: `const form = (field) => ({ type: 'object', properties: { [field]: { type: 'string' } }, required: [field] });
const [first, second] = await Promise.all([
  sdk.elicit('First question?', form('name')),
  sdk.elicit('Second question?', form('colour')),
]);
return 'answers: ' + first.action + ', ' + second.action;`,
        limits: ASKING_LIMITS,
      },
    },
    {
      name: 'test_tool_with_task',
      body: {
        description: 'Asks for a name (key user_name), then answers with it.',
        code: `const answer = await sdk.elicit('What is your name?', {
  type: 'object', properties: { name: { type: 'string' } }, required: ['name'],
}, { key: 'user_name' });
return 'Task result for ' + (answer.content?.name ?? answer.action);`,
        limits: ASKING_LIMITS,
      },
    },
  ];
}
