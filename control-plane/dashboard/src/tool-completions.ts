/**
 * What the code editor completes: the names tool code has in scope —
 * `params.<declared>`, `env.<listed secret>`, the `sdk` members and content
 * builders, the web platform, `console` — by the names docs/tool-code.md uses.
 */
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';

/** What the completion offers after `params.` and `env.`; read on every completion. */
export interface EditorScope {
  parameters(): string[];
  secrets(): string[];
}

// The names of docs/tool-code.md, so the reference, the completion and the examples agree.
const SDK_MEMBERS: Completion[] = [
  {
    label: 'http',
    type: 'function',
    detail: '({method, url, headers?, body?})',
    info: 'HTTP request through the broker; returns {status(), body(), headers(), json()}.',
  },
  {
    label: 'db',
    type: 'function',
    detail: '({type, connection})',
    info: 'A pg or mysql handle: select, insert, query.',
  },
  { label: 'lodash', type: 'namespace', info: 'The lodash library.' },
  {
    label: 'content',
    type: 'namespace',
    info: 'Builders of MCP content blocks: text, image, audio, resource. Return one or an array.',
  },
  {
    label: 'progress',
    type: 'function',
    detail: '(progress, total?, message?)',
    info: 'A progress notification, when the client asked for progress.',
  },
  {
    label: 'closeStream',
    type: 'function',
    detail: '()',
    info: 'Ends the response carrying this call; a client that can resume (SEP-1699) reconnects for the result.',
  },
  {
    label: 'elicit',
    type: 'function',
    detail: '(message, requestedSchema, {key?})',
    info: 'Asks the calling client for input; resolves with {action, content?}.',
  },
  {
    label: 'sample',
    type: 'function',
    detail: '({messages, maxTokens, systemPrompt?}, {key?})',
    info: "Asks the calling client's model for a completion; resolves with its result.",
  },
  {
    label: 'roots',
    type: 'function',
    detail: '({key?})',
    info: 'Asks the calling client for its roots; resolves with {roots: [{uri, name?}]}.',
  },
  {
    label: 'client',
    type: 'variable',
    detail: '{protocolVersion, era, capabilities, info?}',
    info: 'What the calling client declared (frozen); null in a test run.',
  },
  {
    label: 'caller',
    type: 'variable',
    detail: '{kind, subject?, clientId?, scopes, claims, key?}',
    info: "Who made the call, from its credential (frozen): an OAuth token's subject, scopes and the claims the server lists; an API key's id and label.",
  },
];
const CONTENT_MEMBERS: Completion[] = [
  { label: 'text', type: 'function', detail: '(text)' },
  { label: 'image', type: 'function', detail: '(base64, mimeType)' },
  { label: 'audio', type: 'function', detail: '(base64, mimeType)' },
  { label: 'resource', type: 'function', detail: '({uri, mimeType?, text | blob})' },
];
const CONSOLE_MEMBERS: Completion[] = ['log', 'info', 'warn', 'error', 'debug'].map((label) => ({
  label,
  type: 'method',
}));
/** The web platform of tool code (made inside its own realm; fetch goes through the broker). */
const WEB_PLATFORM: Completion[] = [
  ['fetch', 'function', 'HTTP through the broker; returns a Response.'],
  ['URL', 'class', 'The WHATWG URL parser.'],
  ['URLSearchParams', 'class', 'Query strings.'],
  ['TextEncoder', 'class', 'UTF-8 encoding.'],
  ['TextDecoder', 'class', 'UTF-8 decoding.'],
  ['atob', 'function', 'Base64 to a binary string.'],
  ['btoa', 'function', 'A binary string to base64.'],
  ['structuredClone', 'function', 'A deep copy.'],
  ['AbortController', 'class', 'Abort fetch and timers.'],
  ['AbortSignal', 'class', 'AbortSignal.timeout(ms), AbortSignal.abort().'],
  ['performance', 'namespace', 'performance.now()'],
  ['crypto', 'namespace', 'randomUUID(), getRandomValues(), subtle (digest, HMAC).'],
].map(([label, type, info]) => ({ label: label!, type: type!, info: info! }));
const TOP_LEVEL: Completion[] = [
  { label: 'params', type: 'variable', info: 'The arguments of this call.' },
  { label: 'env', type: 'variable', info: 'The secrets this tool lists, by name.' },
  {
    label: 'sdk',
    type: 'namespace',
    info: 'http, db, lodash, content, progress, closeStream, elicit, sample, roots, client, caller',
  },
  { label: 'console', type: 'namespace', info: 'console.log / console.error are captured.' },
  ...WEB_PLATFORM,
];

/** Completes the names tool code has in scope. */
export function toolScopeCompletions(scope: EditorScope) {
  return (context: CompletionContext): CompletionResult | null => {
    const member = context.matchBefore(/\b(params|env|sdk\.content|sdk|console)\.[\w$]*$/);
    if (member) {
      const object = member.text.slice(0, member.text.lastIndexOf('.'));
      const from = member.from + object.length + 1;
      const options: Completion[] =
        object === 'params'
          ? scope.parameters().map((label) => ({ label, type: 'property', detail: 'parameter' }))
          : object === 'env'
            ? scope.secrets().map((label) => ({ label, type: 'constant', detail: 'secret' }))
            : object === 'sdk'
              ? SDK_MEMBERS
              : object === 'sdk.content'
                ? CONTENT_MEMBERS
                : CONSOLE_MEMBERS;
      return { from, options, validFor: /^[\w$]*$/ };
    }
    const word = context.matchBefore(/[\w$]+$/);
    if (!word && !context.explicit) return null;
    return { from: word?.from ?? context.pos, options: TOP_LEVEL, validFor: /^[\w$]*$/ };
  };
}
