/**
 * The prompts and resources the conformance suite's prompts-*, resources-*
 * and completion-complete scenarios ask for, written as an operator would
 * (templates where a template does, code where the result depends on an
 * argument's shape) and saved through the admin API as
 * `PUT /api/servers/{sub}/prompts/{name}` and `…/resources/{name}` bodies.
 * Both requirement sets read the same entries; the 2026-07-28 one adds a
 * prompt whose code asks the client (input-required-result-non-tool-request).
 */
import { LIST_CHANGED_PROBE_PROMPT } from './fixture-diagnostic-tools.js';
import { ASKING_LIMITS } from './fixture-input-tools.js';
import { redPixelPngBase64 } from './sample-media.js';

export interface FixtureEntry {
  kind: 'prompts' | 'resources';
  name: string;
  body: Record<string, unknown>;
}

export function conformanceFixtureEntries(): FixtureEntry[] {
  const png = redPixelPngBase64();
  return [
    {
      // prompts-get-simple
      kind: 'prompts',
      name: 'test_simple_prompt',
      body: {
        description: 'A simple prompt without arguments',
        messages: [
          { role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } },
        ],
      },
    },
    {
      // prompts-get-with-args, completion-complete (arg1 offers values)
      kind: 'prompts',
      name: 'test_prompt_with_arguments',
      body: {
        description: 'A prompt with two required arguments',
        arguments: [
          {
            name: 'arg1',
            description: 'First test argument',
            required: true,
            complete: { values: ['paris', 'park', 'party', 'test', 'testing'] },
          },
          { name: 'arg2', description: 'Second test argument', required: true },
        ],
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text: "Prompt with arguments: arg1='{{arg1}}', arg2='{{arg2}}'",
            },
          },
        ],
      },
    },
    {
      // prompts-get-embedded-resource: the argument becomes the embedded resource's uri
      kind: 'prompts',
      name: 'test_prompt_with_embedded_resource',
      body: {
        description: 'A prompt embedding a resource',
        arguments: [
          { name: 'resourceUri', description: 'URI of the resource to embed', required: true },
        ],
        messages: [
          {
            role: 'user',
            content: {
              type: 'resource',
              resource: {
                uri: '{{resourceUri}}',
                mimeType: 'text/plain',
                text: 'Embedded resource content for testing.',
              },
            },
          },
          {
            role: 'user',
            content: { type: 'text', text: 'Please process the embedded resource above.' },
          },
        ],
      },
    },
    {
      // prompts-get-with-image, from code (sdk.content blocks inside messages)
      kind: 'prompts',
      name: 'test_prompt_with_image',
      body: {
        description: 'A prompt with an image',
        code: `return [
  { role: 'user', content: sdk.content.image('${png}', 'image/png') },
  { role: 'user', content: sdk.content.text('Please analyze the image above.') },
];`,
      },
    },
    {
      // input-required-result-non-tool-request (2026-07-28): prompts/get answers
      // input_required (key user_context), the retry gets the messages
      kind: 'prompts',
      name: 'test_input_required_result_prompt',
      body: {
        description: 'A prompt that asks the client for its context first',
        code: `const answer = await sdk.elicit('What context should the prompt use?', {
  type: 'object', properties: { context: { type: 'string' } }, required: ['context'],
}, { key: 'user_context' });
const context = answer.action === 'accept' ? answer.content.context : '(none given)';
return [{ role: 'user', content: sdk.content.text('Use the following context: ' + context) }];`,
        limits: ASKING_LIMITS,
      },
    },
    {
      // server-stateless (2026-07-28): saved again by test_trigger_prompt_change
      kind: 'prompts',
      name: LIST_CHANGED_PROBE_PROMPT,
      body: {
        description: 'Saved again by test_trigger_prompt_change.',
        messages: [{ role: 'user', content: { type: 'text', text: 'probe' } }],
      },
    },
    {
      // resources-list, resources-read-text, caching (ttlMs and cacheScope on list and read)
      kind: 'resources',
      name: 'static-text',
      body: {
        uri: 'test://static-text',
        description: 'A static text resource',
        mimeType: 'text/plain',
        text: 'This is the content of the static text resource.',
      },
    },
    {
      // resources-read-binary; first in resources/list, so also what caching reads
      kind: 'resources',
      name: 'static-binary',
      body: {
        uri: 'test://static-binary',
        description: 'A static binary resource',
        mimeType: 'image/png',
        blob: png,
      },
    },
    {
      // resources-templates-read
      kind: 'resources',
      name: 'template-data',
      body: {
        uriTemplate: 'test://template/{id}/data',
        description: 'Data by id',
        mimeType: 'application/json',
        code: "return JSON.stringify({ id: params.id, templateTest: true, data: 'Data for ID: ' + params.id });",
      },
    },
    {
      // resources-subscribe, resources-unsubscribe (2025-11-25)
      kind: 'resources',
      name: 'watched-resource',
      body: {
        uri: 'test://watched-resource',
        description: 'A resource to subscribe to',
        mimeType: 'text/plain',
        text: 'Watched resource content.',
      },
    },
  ];
}
