/**
 * Fixture tools that ask the calling client for input: `sdk.elicit`,
 * `sdk.sample` and `sdk.roots` (docs/tool-code.md, "The calling client"). One tool body serves both
 * protocol eras: for a 2025-11-25 client each request travels on the call's
 * own stream; for a 2026-07-28 client the call answers `input_required`
 * with every pending request under its `key`, and the client's retry (with
 * `inputResponses` and the sealed `requestState`) resumes the parked
 * invocation where it waits. The keys are the ones the input-required-result
 * scenarios (SEP-2322) name.
 */
import type { FixtureTool } from './fixture-tools.js';

/**
 * Time limit of the tools that wait for the client, in ms. The 2026-07-28 run
 * abandons several invocations on purpose (a first round it never retries, a
 * tampered retry that leaves the rightful one parked): each keeps its
 * container leased until this limit, so it is short, yet long enough for the
 * rounds the suite does complete (milliseconds apart).
 */
export const ASKING_LIMITS = { timeoutMs: 10_000 } as const;

/** An elicitation answer as the legacy scenarios' text: `action=…, content={…}`. */
const DESCRIBE_ANSWER =
  "const describe = (answer) => 'action=' + answer.action + ', content=' + JSON.stringify(answer.content ?? {});";

/** A one-field form, as the SEP-2322 scenarios ask for it. */
function oneFieldForm(field: string, type = 'string'): string {
  return `{ type: 'object', properties: { ${field}: { type: '${type}' } }, required: ['${field}'] }`;
}

/** The text of a sampling answer, whether its content is one block or several. */
const SAMPLED_TEXT = `const sampledText = (answer) => {
  const blocks = Array.isArray(answer.content) ? answer.content : [answer.content];
  return blocks.map((block) => (block.type === 'text' ? block.text : '[' + block.type + ']')).join('');
};`;

export function clientInputTools(): FixtureTool[] {
  return [...legacyInputTools(), ...inputRequiredTools()];
}

/** The 2025-11-25 scenarios: push requests answered by the suite's SDK client. */
function legacyInputTools(): FixtureTool[] {
  return [
    {
      // tools-call-sampling: sampling/createMessage with the prompt, maxTokens 100
      name: 'test_sampling',
      body: {
        description: 'Asks the client to sample an LLM with the prompt.',
        parameters: [
          { name: 'prompt', type: 'string', required: true, description: 'The prompt to send' },
        ],
        code: `${SAMPLED_TEXT}
const answer = await sdk.sample({
  messages: [{ role: 'user', content: { type: 'text', text: params.prompt } }],
  maxTokens: 100,
});
return 'LLM response: ' + sampledText(answer);`,
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
  ];
}

/** The 2026-07-28 input-required-result-* scenarios (SEP-2322). */
function inputRequiredTools(): FixtureTool[] {
  const asking = (description: string, code: string): Record<string, unknown> => ({
    description,
    code,
    limits: ASKING_LIMITS,
  });
  return [
    {
      // basic-elicitation (key user_name), and result-type, missing-input-response,
      // ignore-extra-params and validate-input, which call it with odd inputResponses
      name: 'test_input_required_result_elicitation',
      body: asking(
        'Asks for the caller name (one elicitation, key user_name).',
        `const answer = await sdk.elicit('What is your name?', ${oneFieldForm('name')}, { key: 'user_name' });
return answer.action === 'accept' ? 'Hello, ' + answer.content.name + '!' : 'No name given (' + answer.action + ').';`,
      ),
    },
    {
      // basic-sampling (key capital_question)
      name: 'test_input_required_result_sampling',
      body: asking(
        'Asks the client model a question (one sampling request, key capital_question).',
        `${SAMPLED_TEXT}
const answer = await sdk.sample(
  {
    messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
    maxTokens: 100,
  },
  { key: 'capital_question' },
);
return 'Sampling response: ' + sampledText(answer);`,
      ),
    },
    {
      // basic-list-roots (key client_roots)
      name: 'test_input_required_result_list_roots',
      body: asking(
        "Asks for the client's roots (one roots/list request, key client_roots).",
        `const { roots } = await sdk.roots({ key: 'client_roots' });
return 'Client exposed ' + roots.length + ' root(s): ' + roots.map((root) => root.uri).join(', ');`,
      ),
    },
    {
      // request-state: round 1 carries inputRequests and requestState; the retry
      // echoes the state, and the text says state-ok
      name: 'test_input_required_result_request_state',
      body: asking(
        'Asks for a confirmation (key confirm); the answer comes back through the sealed requestState.',
        `const answer = await sdk.elicit('Please confirm', ${oneFieldForm('ok', 'boolean')}, { key: 'confirm' });
return 'state-ok: requestState verified and confirmation received (' + answer.action + ')';`,
      ),
    },
    {
      // multiple-input-requests: three kinds awaited together are one round
      name: 'test_input_required_result_multiple_inputs',
      body: asking(
        'Asks for a name, a sampled greeting and the roots in one round.',
        `${SAMPLED_TEXT}
const [name, greeting, roots] = await Promise.all([
  sdk.elicit('What is your name?', ${oneFieldForm('name')}, { key: 'user_name' }),
  sdk.sample(
    { messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 },
    { key: 'greeting' },
  ),
  sdk.roots({ key: 'client_roots' }),
]);
return sampledText(greeting) + ' ' + (name.content?.name ?? name.action) + ' — ' + roots.roots.length + ' root(s) visible';`,
      ),
    },
    {
      // multi-round: a second await after an answer is a second round, with a new requestState
      name: 'test_input_required_result_multi_round',
      body: asking(
        'Asks for a name, then for a favourite colour: two rounds.',
        `const step1 = await sdk.elicit('Step 1: What is your name?', ${oneFieldForm('name')}, { key: 'step1' });
const step2 = await sdk.elicit('Step 2: What is your favorite color?', ${oneFieldForm('color')}, { key: 'step2' });
return 'Multi-round complete: ' + (step1.content?.name ?? 'unknown') + ' likes ' + (step2.content?.color ?? 'unknown');`,
      ),
    },
    {
      // tampered-state: a retry with an altered requestState is a JSON-RPC error
      name: 'test_input_required_result_tampered_state',
      body: asking(
        'Asks for a confirmation (key confirm); a tampered requestState is refused.',
        `const answer = await sdk.elicit('Please confirm', ${oneFieldForm('ok', 'boolean')}, { key: 'confirm' });
return 'integrity-ok: requestState verified (' + answer.action + ')';`,
      ),
    },
    {
      // capability-check: asks only for what the request's clientCapabilities declare
      // (sdk.client), so a client declaring only sampling gets only a sampling request
      name: 'test_input_required_result_capabilities',
      body: asking(
        'Asks only for the kinds of input the calling client declared.',
        `const declared = sdk.client?.capabilities ?? {};
const asks = [];
if (declared.elicitation) asks.push(sdk.elicit('What is your name?', ${oneFieldForm('name')}, { key: 'user_name' }));
if (declared.sampling) {
  asks.push(sdk.sample(
    { messages: [{ role: 'user', content: { type: 'text', text: 'Generate a short greeting' } }], maxTokens: 50 },
    { key: 'greeting' },
  ));
}
if (declared.roots) asks.push(sdk.roots({ key: 'client_roots' }));
if (asks.length === 0) return 'No declared client capability supports an in-band input request';
await Promise.all(asks);
return 'Capability-aware input requests fulfilled';`,
      ),
    },
  ];
}
