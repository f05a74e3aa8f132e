/**
 * The tools the conformance suite's server scenarios call, written as a tool
 * author would write them for mcphost (tool code, `sdk.*`, parameters or a
 * JSON Schema `inputSchema`) and saved through the admin API as
 * `PUT /api/servers/{sub}/tools/{name}` bodies. Names, arguments and results
 * follow each scenario's "Server Implementation Requirements" in
 * `@modelcontextprotocol/conformance` 0.2.0-alpha.12, for both requirement
 * sets: a tool never knows which protocol era calls it.
 *
 * This file holds the tools that only return content; those that ask the
 * calling client are in fixture-input-tools.ts, the diagnostic ones of
 * `server-stateless`, SEP-2243 and the tasks extension in
 * fixture-diagnostic-tools.ts.
 */
import { diagnosticTools } from './fixture-diagnostic-tools.js';
import { clientInputTools } from './fixture-input-tools.js';
import { redPixelPngBase64, shortToneWavBase64 } from './sample-media.js';

/** One tool to save: its name and the admin API body. */
export interface FixtureTool {
  name: string;
  body: Record<string, unknown>;
}

/** What fixtures that reach the control plane itself need to know. */
export interface FixtureContext {
  /** The admin side as seen from the control plane, e.g. `http://127.0.0.1:8080`. */
  adminUrl: string;
  /** The subdomain of the server the fixtures are saved on. */
  subdomain: string;
}

/** The delays the scenarios ask for between notifications (~50 ms). */
const PAUSE = 'const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));';

/** The 2020-12 dialect `json-schema-2020-12` expects in `$schema`, verbatim. */
const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** Every fixture tool of both requirement sets. */
export function conformanceFixtureTools(context: FixtureContext): FixtureTool[] {
  return [...contentTools(), ...clientInputTools(), ...diagnosticTools(context)];
}

function contentTools(): FixtureTool[] {
  const png = redPixelPngBase64();
  const wav = shortToneWavBase64();
  return [
    {
      // tools-call-simple-text
      name: 'test_simple_text',
      body: {
        description: 'Returns simple text.',
        code: "return 'This is a simple text response for testing.';",
      },
    },
    {
      // tools-call-image
      name: 'test_image_content',
      body: {
        description: 'Returns a 1x1 red PNG as image content.',
        code: `return sdk.content.image('${png}', 'image/png');`,
      },
    },
    {
      // tools-call-audio (the scenario requires mimeType audio/wav)
      name: 'test_audio_content',
      body: {
        description: 'Returns a short WAV tone as audio content.',
        code: `return sdk.content.audio('${wav}', 'audio/wav');`,
      },
    },
    {
      // tools-call-embedded-resource
      name: 'test_embedded_resource',
      body: {
        description: 'Returns an embedded text resource.',
        code: `return sdk.content.resource({
  uri: 'test://embedded-resource',
  mimeType: 'text/plain',
  text: 'This is an embedded resource content.',
});`,
      },
    },
    {
      // tools-call-mixed-content: text, image and resource blocks in one result
      name: 'test_multiple_content_types',
      body: {
        description: 'Returns text, image and resource content together.',
        code: `return [
  sdk.content.text('Multiple content types test:'),
  sdk.content.image('${png}', 'image/png'),
  sdk.content.resource({
    uri: 'test://mixed-content-resource',
    mimeType: 'application/json',
    text: JSON.stringify({ test: 'data', value: 123 }),
  }),
];`,
      },
    },
    {
      // tools-call-with-logging (2025-11-25): three info-level log notifications,
      // ~50 ms apart, at or above the level the session set
      name: 'test_tool_with_logging',
      body: {
        description: 'Logs three messages while it runs.',
        code: `${PAUSE}
console.info('Tool execution started');
await pause(50);
console.info('Tool processing data');
await pause(50);
console.info('Tool execution completed');
return 'Logging test completed';`,
      },
    },
    {
      // tools-call-error: an isError result whose first block carries the message
      name: 'test_error_handling',
      body: {
        description: 'Always fails.',
        code: "throw new Error('This tool intentionally returns an error for testing');",
      },
    },
    {
      // tools-call-with-progress: 0/100, 50/100, 100/100 against the request's
      // progressToken (`_meta.progressToken` in both eras), before the result
      name: 'test_tool_with_progress',
      body: {
        description: 'Reports progress 0, 50 and 100 of 100.',
        code: `${PAUSE}
await sdk.progress(0, 100);
await pause(50);
await sdk.progress(50, 100);
await pause(50);
await sdk.progress(100, 100);
return 'Progress test completed';`,
      },
    },
    {
      // server-sse-polling (2025-11-25, SEP-1699): the call's SSE response ends after
      // its priming event, before the result, which the client then gets by GET with
      // Last-Event-ID
      name: 'test_reconnection',
      body: {
        description:
          'Closes its SSE stream mid-call; the client reconnects for the result (SEP-1699).',
        code: `${PAUSE}
sdk.closeStream();
await pause(200);
return 'Reconnection test completed successfully';`,
      },
    },
    {
      // json-schema-2020-12: $schema, $defs/$ref and additionalProperties (SEP-1613) and
      // $anchor, allOf/anyOf, if/then/else (SEP-2106) published as written; the
      // suite's own canonical schema, verbatim
      name: 'json_schema_2020_12_tool',
      body: {
        description: 'Tool with JSON Schema 2020-12 features',
        inputSchema: {
          $schema: JSON_SCHEMA_2020_12,
          type: 'object',
          $defs: {
            address: {
              $anchor: 'addressDef',
              type: 'object',
              properties: { street: { type: 'string' }, city: { type: 'string' } },
            },
          },
          properties: {
            name: { type: 'string' },
            address: { $ref: '#/$defs/address' },
            contactMethod: { type: 'string', enum: ['phone', 'email'] },
            phone: { type: 'string' },
            email: { type: 'string' },
          },
          allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
          if: {
            properties: { contactMethod: { const: 'phone' } },
            required: ['contactMethod'],
          },
          then: { required: ['phone'] },
          else: { required: ['email'] },
          additionalProperties: false,
        },
        code: "return 'JSON Schema 2020-12 tool called with: ' + JSON.stringify(params);",
      },
    },
  ];
}
