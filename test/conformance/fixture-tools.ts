/**
 * The tools the conformance suite's server scenarios call, written as a tool
 * author would write them for mcphost (tool code, `sdk.*`, parameters or a
 * JSON Schema `inputSchema`) and saved through the admin API as
 * `PUT /api/servers/{sub}/tools/{name}` bodies. Names, arguments and results
 * follow each scenario's "Server Implementation Requirements" in
 * `@modelcontextprotocol/conformance` (identical in 0.1.13 and 0.1.16).
 */
import { redPixelPngBase64, shortToneWavBase64 } from './sample-media.js';

/** One tool to save: its name and the admin API body. */
export interface FixtureTool {
  name: string;
  body: Record<string, unknown>;
}

/** The delays the scenarios ask for between notifications (~50 ms). */
const PAUSE = 'const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));';

/** The 2020-12 dialect `json-schema-2020-12` expects in `$schema`, verbatim. */
const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** An elicitation answer as the scenarios' text: `action=…, content={…}`. */
const DESCRIBE_ANSWER =
  "const describe = (answer) => 'action=' + answer.action + ', content=' + JSON.stringify(answer.content ?? {});";

export function conformanceFixtureTools(): FixtureTool[] {
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
      // tools-call-with-logging: three info-level log notifications, ~50 ms apart
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
      // tools-call-with-progress: 0/100, 50/100, 100/100 against the request's progressToken
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
      // server-sse-polling (SEP-1699): the call's SSE response ends after its priming
      // event, before the result, which the client then gets by GET with Last-Event-ID
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
      // tools-call-sampling: sampling/createMessage with the prompt, maxTokens 100
      name: 'test_sampling',
      body: {
        description: 'Asks the client to sample an LLM with the prompt.',
        parameters: [
          { name: 'prompt', type: 'string', required: true, description: 'The prompt to send' },
        ],
        code: `const answer = await sdk.sample({
  messages: [{ role: 'user', content: { type: 'text', text: params.prompt } }],
  maxTokens: 100,
});
const blocks = Array.isArray(answer.content) ? answer.content : [answer.content];
const text = blocks.map((block) => (block.type === 'text' ? block.text : '[' + block.type + ']')).join('');
return 'LLM response: ' + text;`,
      },
    },
    {
      // tools-call-elicitation: elicitation/create with the message and a username/email form
      name: 'test_elicitation',
      body: {
        description: 'Asks the user for a username and an email address.',
        parameters: [
          {
            name: 'message',
            type: 'string',
            required: true,
            description: 'The message to show the user',
          },
        ],
        code: `${DESCRIBE_ANSWER}
const answer = await sdk.elicit(params.message, {
  type: 'object',
  properties: {
    username: { type: 'string', description: "User's response" },
    email: { type: 'string', description: "User's email address" },
  },
  required: ['username', 'email'],
});
return 'User response: ' + describe(answer);`,
      },
    },
    {
      // elicitation-sep1034-defaults: a default for every primitive type
      name: 'test_elicitation_sep1034_defaults',
      body: {
        description: 'Asks for a form whose fields all have defaults (SEP-1034).',
        code: `${DESCRIBE_ANSWER}
const answer = await sdk.elicit('Please review and update the form fields with defaults', {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: {
      type: 'string',
      description: 'User status',
      enum: ['active', 'inactive', 'pending'],
      default: 'active',
    },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  },
});
return 'Elicitation completed: ' + describe(answer);`,
      },
    },
    {
      // elicitation-sep1330-enums: the five enum shapes of SEP-1330
      name: 'test_elicitation_sep1330_enums',
      body: {
        description: 'Asks for a form with every enum variant (SEP-1330).',
        code: `${DESCRIBE_ANSWER}
const answer = await sdk.elicit('Please select options from the enum fields', {
  type: 'object',
  properties: {
    untitledSingle: {
      type: 'string',
      description: 'Untitled single-select',
      enum: ['option1', 'option2', 'option3'],
    },
    titledSingle: {
      type: 'string',
      description: 'Titled single-select',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      description: 'Legacy titled enum',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      description: 'Untitled multi-select',
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      description: 'Titled multi-select',
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
});
return 'Elicitation completed: ' + describe(answer);`,
      },
    },
    {
      // json-schema-2020-12: $schema, $defs/$ref and additionalProperties published as written
      name: 'json_schema_2020_12_tool',
      body: {
        description: 'Tool with JSON Schema 2020-12 features',
        inputSchema: {
          $schema: JSON_SCHEMA_2020_12,
          type: 'object',
          $defs: {
            address: {
              type: 'object',
              properties: { street: { type: 'string' }, city: { type: 'string' } },
            },
          },
          properties: {
            name: { type: 'string' },
            address: { $ref: '#/$defs/address' },
          },
          additionalProperties: false,
        },
        code: 'return { name: params.name ?? null, address: params.address ?? null };',
      },
    },
  ];
}
