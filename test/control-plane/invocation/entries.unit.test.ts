/**
 * The pure parts of prompts, resources and completions (issue 14), without
 * Docker: RFC 6570 templates (every operator, match/expand, percent-decoding,
 * refusals, and linear-time matching of hostile URIs), completion ranking,
 * list pagination, argument checks and one-pass (bounded) template rendering,
 * what prompt and template code may return, which resource a URI names, which
 * subscribed URIs a change touches, and the definitions a save refuses.
 */
import { describe, expect, it } from 'vitest';
import { isMcphostError } from '../../../control-plane/errors.js';
import {
  bounded,
  MAX_COMPLETION_ANSWER,
  rankCompletions,
} from '../../../control-plane/invocation/completion-ranking.js';
import {
  answerOf,
  checkPromptArguments,
  messagesFromCode,
  renderTemplate,
} from '../../../control-plane/invocation/prompt-rendering.js';
import { contentsFromCode } from '../../../control-plane/invocation/resource-contents.js';
import { findResource } from '../../../control-plane/invocation/resource-lookup.js';
import {
  paginate as paginateListed,
  PAGE_MAX_BYTES,
  PAGE_MAX_ITEMS,
} from '../../../control-plane/mcp/pagination.js';
import {
  MAX_SUBSCRIPTIONS_PER_SESSION,
  ResourceSubscriptions,
} from '../../../control-plane/mcp/resource-subscriptions.js';
import { findResourceChanges } from '../../../control-plane/mcp/resource-updates.js';
import {
  MAX_TEMPLATE_VARIABLES,
  parseUriTemplate,
  promptDefinitionSchema,
  resourceDefinitionSchema,
  UriTemplateError,
  type PromptDefinitionInput,
  type PromptMessage,
  type PromptRecord,
  type ResourceDefinitionInput,
  type ResourceRecord,
} from '../../../control-plane/store/index.js';
import { MAX_MATCHED_URI_LENGTH } from '../../../control-plane/store/uri-template.js';

/** A saved prompt as the configuration holds it. */
function promptRecord(definition: PromptDefinitionInput, name = 'summary'): PromptRecord {
  return {
    ...promptDefinitionSchema.parse(definition),
    subdomain: 'unit',
    name,
    version: 1,
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
  };
}

/** A saved resource as the configuration holds it. */
function resourceRecord(
  name: string,
  definition: ResourceDefinitionInput,
  version = 1,
): ResourceRecord {
  return {
    ...resourceDefinitionSchema.parse(definition),
    subdomain: 'unit',
    name,
    version,
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
  };
}

/** The McphostError code `work` throws (fails the test when it throws none). */
function codeThrown(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    if (isMcphostError(error)) return error.code;
    throw error;
  }
  throw new Error('expected a McphostError, nothing was thrown');
}

function messageThrown(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an error, nothing was thrown');
}

describe('parseUriTemplate', () => {
  it('matches and expands every supported operator', () => {
    const cases: [string, string, Record<string, string>][] = [
      ['weather://{city}/today', 'weather://Paris/today', { city: 'Paris' }],
      ['pair://{a,b}', 'pair://1,2', { a: '1', b: '2' }],
      ['file:///{+path}', 'file:///docs/guide/intro.md', { path: 'docs/guide/intro.md' }],
      ['doc://book{#section}', 'doc://book#chapter-2', { section: 'chapter-2' }],
      ['file:///report{.format}', 'file:///report.pdf', { format: 'pdf' }],
      [
        'repo://github{/owner,name}',
        'repo://github/mcphost/core',
        { owner: 'mcphost', name: 'core' },
      ],
      [
        'search://items{?term,page}',
        'search://items?term=cats&page=2',
        { term: 'cats', page: '2' },
      ],
      [
        'search://items{?term}{&page}',
        'search://items?term=dogs&page=3',
        { term: 'dogs', page: '3' },
      ],
    ];
    for (const [template, uri, values] of cases) {
      const parsed = parseUriTemplate(template);
      expect(parsed.template).toBe(template);
      expect(parsed.variables, template).toEqual(Object.keys(values));
      expect({ ...parsed.match(uri) }, template).toEqual(values);
      expect(parsed.expand(values), template).toBe(uri);
    }
  });

  it('round-trips values through expand and match, percent-encoded and decoded', () => {
    const values = [
      'São Paulo',
      'a/b?c#d&e',
      '100% sure',
      'emoji 🌧️',
      'comma,inside',
      'equals=sign',
      '日本語',
    ];
    const templates = [
      'weather://{city}/today',
      'file:///{+city}',
      'doc://x{#city}',
      'repo://h{/city}',
      'search://q{?city}',
      'search://q?fixed=1{&city}',
    ];
    for (const template of templates) {
      const parsed = parseUriTemplate(template);
      for (const city of values) {
        // The reserved operators keep , / ? # & as they are: only unambiguous values round-trip.
        if (/[+#]/.test(template) && /[,/?#&=]/.test(city)) continue;
        const uri = parsed.expand({ city });
        expect({ ...parsed.match(uri) }, `${template} ${uri}`).toEqual({ city });
      }
    }
    // The simple operator encodes what would end the variable.
    expect(parseUriTemplate('weather://{city}/today').expand({ city: 'a/b c' })).toBe(
      'weather://a%2Fb%20c/today',
    );
    expect(parseUriTemplate('file:///{+path}').expand({ path: 'a/b c' })).toBe('file:///a/b%20c');
  });

  it('percent-decodes matched values, and keeps a value whose escapes are broken as it is', () => {
    const weather = parseUriTemplate('weather://{city}/today');
    expect({ ...weather.match('weather://S%C3%A3o%20Paulo/today') }).toEqual({
      city: 'São Paulo',
    });
    expect({ ...weather.match('weather://100%/today') }).toEqual({ city: '100%' });
    expect({ ...weather.match('weather://%E0%A4%A/today') }).toEqual({ city: '%E0%A4%A' });
  });

  it('matches only whole URIs in which every variable is present', () => {
    const weather = parseUriTemplate('weather://{city}/today');
    expect(weather.match('weather:///today')).toBeUndefined();
    expect(weather.match('weather://Paris/today/extra')).toBeUndefined();
    expect(weather.match('xweather://Paris/today')).toBeUndefined();
    expect(weather.match('weather://Par/is/today')).toBeUndefined();
    const query = parseUriTemplate('search://items{?term,page}');
    expect(query.match('search://items?term=cats')).toBeUndefined();
    // Literal text is literal, not a pattern.
    const dotted = parseUriTemplate('a.b://{x}');
    expect(dotted.match('aXb://1')).toBeUndefined();
    expect({ ...dotted.match('a.b://1') }).toEqual({ x: '1' });
  });

  it('gives matched values on an object without a prototype, and refuses prototype names', () => {
    const values = parseUriTemplate('x://{toString}')?.match('x://1');
    expect(Object.getPrototypeOf(values)).toBeNull();
    expect(values?.toString).toBe('1');
    for (const name of ['constructor', '__proto__', 'prototype']) {
      expect(() => parseUriTemplate(`x://{${name}}`)).toThrow(
        /not __proto__, constructor or prototype/,
      );
    }
  });

  it('refuses what it does not support, saying why', () => {
    const refusals: [string, RegExp][] = [
      ['list://{items*}', /explode \(\*\) and prefix \(:n\) modifiers are not supported/],
      ['name://{name:3}', /explode \(\*\) and prefix \(:n\) modifiers are not supported/],
      ['twice://{a}/{a}', /variable "a" appears twice/],
      ['twice://{a,a}', /variable "a" appears twice/],
      ['plain://no/variables', /at least one \{variable\}/],
      [
        `many://${Array.from({ length: MAX_TEMPLATE_VARIABLES + 1 }, (_, i) => `{v${i}}`).join('/')}`,
        /at most 16 variables/,
      ],
      ['/{relative}', /starts with a scheme/],
      ['{scheme}://x', /starts with a scheme/],
      ['open://{a', /unclosed "\{" at character 8/],
      ['close://a}', /unopened "\}" at character 10/],
      ['bad://{a-b}', /a variable name is letters, digits and _/],
      ['empty://{}', /a variable name is letters, digits and _/],
      ['space://{a} b', /may not appear in a URI template/],
      [`long://${'x'.repeat(2048)}{a}`, /at most 2048 characters/],
    ];
    for (const [template, message] of refusals) {
      expect(() => parseUriTemplate(template), template).toThrow(UriTemplateError);
      expect(
        messageThrown(() => parseUriTemplate(template)),
        template,
      ).toMatch(message);
    }
    const sixteen = Array.from({ length: MAX_TEMPLATE_VARIABLES }, (_, i) => `{v${i}}`).join('/');
    expect(parseUriTemplate(`many://${sixteen}`).variables).toHaveLength(16);
  });

  it('splits where the next value cannot hold the literal, and matches what it expands', () => {
    const cases: [string, string, Record<string, string>][] = [
      ['file:///{+dir}/{name}', 'file:///a/b/c.txt', { dir: 'a/b', name: 'c.txt' }],
      ['file:///{name}{.ext}', 'file:///archive.tar.gz', { name: 'archive.tar', ext: 'gz' }],
      ['x://{+p}{/id}', 'x://a/b/c', { p: 'a/b', id: 'c' }],
      ['file:///{+path}/raw', 'file:///a/raw/b/raw', { path: 'a/raw/b' }],
      ['x://{a}/{b}/{c}', 'x://1/2/3', { a: '1', b: '2', c: '3' }],
      ['s://find{?q,limit}', 's://find?q=x%26y&limit=5', { q: 'x&y', limit: '5' }],
    ];
    for (const [template, uri, values] of cases) {
      const parsed = parseUriTemplate(template);
      expect({ ...parsed.match(uri) }, `${template} ~ ${uri}`).toEqual(values);
      expect({ ...parsed.match(parsed.expand(values)) }, `${template} round trip`).toEqual(values);
    }
    expect(parseUriTemplate('x://{a}/{b}/{c}').match('x://1/2/3/4')).toBeUndefined();
    // A label's value may hold a dot: expanded as %2E, decoded again.
    const label = parseUriTemplate('x://h{.a}');
    expect(label.expand({ a: 'v1.2' })).toBe('x://h.v1%2E2');
    expect({ ...label.match(label.expand({ a: 'v1.2' })) }).toEqual({ a: 'v1.2' });
  });

  it('refuses variables with nothing between them, which no URI can tell apart', () => {
    for (const template of ['x://{a}{b}', 'x://{+a}{+b}!', 'x://{a}/{b}{+c}']) {
      expect(() => parseUriTemplate(template)).toThrow(
        /follow each other with nothing between them/,
      );
    }
  });

  it('matches a long hostile URI in linear time, with no regular expression to backtrack', () => {
    // Literals that repeat what a URI is made of: each slot still ends at one indexOf.
    const crafted = parseUriTemplate(`x:{+v0}${'a'.repeat(110)}{+v1}${'a'.repeat(110)}`);
    const slots = parseUriTemplate('x://{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/end');
    const longest = MAX_MATCHED_URI_LENGTH;
    const started = performance.now();
    for (let i = 0; i < 200; i++) {
      expect(crafted.match(`x:${'a'.repeat(longest - 3)}b`)).toBeUndefined();
      expect(crafted.match(`x:${'ab'.repeat((longest - 2) / 2)}`)).toBeUndefined();
      expect(slots.match(`x://${'a/'.repeat((longest - 6) / 2)}zz`)).toBeUndefined();
    }
    // 400 hostile matches: RE2's NFA took ~0.7 s for one crafted match of this length.
    expect(performance.now() - started).toBeLessThan(1000);
    // Past the longest URI matched, nothing matches.
    expect(parseUriTemplate('x://{+a}').match(`x://${'a'.repeat(longest - 3)}`)).toBeUndefined();
    // And the same templates match what they should.
    expect({ ...slots.match('x://1/2/3/4/5/6/7/8/end') }).toEqual({
      a: '1',
      b: '2',
      c: '3',
      d: '4',
      e: '5',
      f: '6',
      g: '7',
      h: '8',
    });
    const everything = parseUriTemplate('x://{+a}');
    expect(everything.match(`x://${'a'.repeat(longest - 4)}`)?.a).toHaveLength(longest - 4);
  });
});

describe('rankCompletions', () => {
  const cities = ['Lisbon', 'paris', 'Comparison', 'Parma', 'PARIS-NORD', 'Paris', 'Oslo'];

  it('ranks same-case prefixes, then prefixes ignoring case, then substrings, each in list order', () => {
    expect(rankCompletions(cities, 'Par')).toEqual({
      values: ['Parma', 'Paris', 'paris', 'PARIS-NORD', 'Comparison'],
      total: 5,
      hasMore: false,
    });
    expect(rankCompletions(cities, 'par').values).toEqual([
      'paris',
      'Parma',
      'PARIS-NORD',
      'Paris',
      'Comparison',
    ]);
    expect(rankCompletions(cities, 'zzz')).toEqual({ values: [], total: 0, hasMore: false });
    expect(rankCompletions(cities, '').values).toEqual(cities);
  });

  it('answers at most 100 values, with the total and whether there are more', () => {
    const many = Array.from({ length: 250 }, (_, i) => `value-${String(i).padStart(3, '0')}`);
    const ranked = rankCompletions(many, 'value');
    expect(ranked.values).toHaveLength(MAX_COMPLETION_ANSWER);
    expect(ranked.values[0]).toBe('value-000');
    expect(ranked).toMatchObject({ total: 250, hasMore: true });
    expect(rankCompletions(many.slice(0, 100), 'value')).toMatchObject({
      total: 100,
      hasMore: false,
    });
  });

  it('bounds code answers, keeping a total and hasMore the code gave', () => {
    expect(bounded(['a', 'b'])).toEqual({ values: ['a', 'b'], total: 2, hasMore: false });
    expect(bounded(['a', 'b'], 40, true)).toEqual({ values: ['a', 'b'], total: 40, hasMore: true });
    const cut = bounded(Array.from({ length: 130 }, (_, i) => String(i)));
    expect(cut).toMatchObject({ total: 130, hasMore: true });
    expect(cut.values).toHaveLength(100);
  });
});

describe('paginate', () => {
  const items = Array.from({ length: 250 }, (_, i) => ({
    name: `item-${String(i).padStart(3, '0')}`,
  }));
  // Items listed as they are; `maxItems` as a third argument.
  const paginate = (list: readonly { name: string }[], cursor?: string, maxItems?: number) =>
    paginateListed(
      list,
      cursor,
      (item) => item,
      maxItems === undefined ? undefined : { maxItems, maxBytes: PAGE_MAX_BYTES },
    );

  it('walks pages of 100 by the cursor it gives, with nothing skipped or repeated', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    const sizes: number[] = [];
    do {
      const page = paginate(items, cursor);
      sizes.push(page.items.length);
      seen.push(...page.items.map((item) => item.name));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(sizes).toEqual([PAGE_MAX_ITEMS, PAGE_MAX_ITEMS, 50]);
    expect(seen).toEqual(items.map((item) => item.name));
    // Exactly one page: no cursor.
    expect(paginate(items.slice(0, 100), undefined).nextCursor).toBeUndefined();
    expect(paginate([], undefined)).toEqual({ items: [] });
  });

  it('goes on after the last name of a page, whatever was saved or deleted meanwhile', () => {
    const first = paginate(items, undefined, 10);
    expect(first.items.at(-1)!.name).toBe('item-009');
    // item-009 deleted, item-0095 added between the pages.
    const changed = [...items.slice(0, 9), { name: 'item-0095' }, ...items.slice(10)];
    const second = paginate(changed, first.nextCursor, 10);
    expect(second.items[0]!.name).toBe('item-0095');
    expect(second.items[1]!.name).toBe('item-010');
    // A cursor past every item gives an empty last page.
    const last = paginate(items.slice(0, 5), first.nextCursor, 10);
    expect(last).toEqual({ items: [] });
  });

  it('ends a page before the item that would take it past its bytes, never before its first', () => {
    const wide = Array.from({ length: 10 }, (_, i) => ({
      name: `wide-${i}`,
      text: 'x'.repeat(i === 4 ? 3000 : 300),
    }));
    const bounds = { maxItems: 100, maxBytes: 1000 };
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = paginateListed(wide, cursor, (item) => item, bounds);
      pages.push(page.items.map((item) => item.name));
      for (const item of page.items.slice(1)) expect(item.text.length).toBeLessThan(1000);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toEqual([
      ['wide-0', 'wide-1', 'wide-2'],
      ['wide-3'],
      ['wide-4'],
      ['wide-5', 'wide-6', 'wide-7'],
      ['wide-8', 'wide-9'],
    ]);
  });

  it('refuses a cursor it did not give as ERR_VALIDATION', () => {
    const valid = paginate(items, undefined).nextCursor!;
    for (const cursor of [
      '',
      'not a cursor!',
      `${valid}=`,
      'A'.repeat(600),
      valid.slice(0, -1) + '*',
    ]) {
      expect(
        codeThrown(() => paginate(items, cursor)),
        JSON.stringify(cursor),
      ).toBe('ERR_VALIDATION');
    }
    expect(messageThrown(() => paginate(items, '!!'))).toBe(
      'Invalid cursor: pass back a nextCursor as it came',
    );
  });
});

const SUMMARY: PromptDefinitionInput = {
  description: 'Summarise a city',
  arguments: [{ name: 'city', required: true }, { name: 'style' }],
  messages: [
    { role: 'user', content: { type: 'text', text: 'Summarise {{city}} in a {{ style }} style.' } },
    { role: 'assistant', content: { type: 'text', text: 'About {{city}}: {{style}}' } },
  ],
};

describe('checkPromptArguments', () => {
  const prompt = promptRecord(SUMMARY);

  it('gives the arguments as strings by name', () => {
    expect({ ...checkPromptArguments(prompt, { city: 'Paris', style: 'short' }) }).toEqual({
      city: 'Paris',
      style: 'short',
    });
    expect({ ...checkPromptArguments(prompt, { city: 'Paris' }) }).toEqual({ city: 'Paris' });
    expect(
      checkPromptArguments(
        promptRecord({
          ...SUMMARY,
          arguments: [],
          messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
        }),
        undefined,
      ),
    ).toEqual({});
  });

  it('refuses a missing required argument, an undeclared one and a value that is no string', () => {
    for (const [args, message] of [
      [undefined, 'prompt "summary" needs the argument(s) city'],
      [{ style: 'long' }, 'prompt "summary" needs the argument(s) city'],
      [{ city: 'Paris', mood: 'happy' }, 'prompt "summary" has no argument "mood"'],
      [{ city: 3 }, 'argument "city" of prompt "summary" must be a string'],
      [{ city: 'Paris', style: null }, 'argument "style" of prompt "summary" must be a string'],
    ] as [Record<string, unknown> | undefined, string][]) {
      expect(codeThrown(() => checkPromptArguments(prompt, args))).toBe('ERR_INVALID_ARGUMENT');
      expect(messageThrown(() => checkPromptArguments(prompt, args))).toBe(message);
    }
    // An own property named like a prototype key is an undeclared argument, not a lookup.
    const sneaky = JSON.parse('{"city": "Paris", "__proto__": "x"}') as Record<string, unknown>;
    expect(messageThrown(() => checkPromptArguments(prompt, sneaky))).toBe(
      'prompt "summary" has no argument "__proto__"',
    );
    expect(messageThrown(() => checkPromptArguments(prompt, { city: 'P', toString: 'x' }))).toBe(
      'prompt "summary" has no argument "toString"',
    );
  });
});

describe('renderTemplate', () => {
  type Template = PromptRecord & { messages: PromptMessage[] };
  const template = (definition: PromptDefinitionInput) => promptRecord(definition) as Template;
  /** Renders with a bound no test text comes near. */
  const render = (prompt: Template, values: Record<string, string>) =>
    renderTemplate(prompt, values, 1_000_000);

  it('replaces every placeholder; an absent optional argument is the empty string', () => {
    const prompt = template(SUMMARY);
    expect(render(prompt, checkPromptArguments(prompt, { city: 'Paris', style: 'short' }))).toEqual(
      [
        { role: 'user', content: { type: 'text', text: 'Summarise Paris in a short style.' } },
        { role: 'assistant', content: { type: 'text', text: 'About Paris: short' } },
      ],
    );
    expect(render(prompt, checkPromptArguments(prompt, { city: 'Oslo' }))[0]).toEqual({
      role: 'user',
      content: { type: 'text', text: 'Summarise Oslo in a  style.' },
    });
  });

  it('replaces in one pass: a value holding {{other}} or $& stays as it is', () => {
    const prompt = template(SUMMARY);
    const messages = render(prompt, { city: '{{style}}', style: '$& and $1 and $$' });
    expect(messages[0]!.content).toEqual({
      type: 'text',
      text: 'Summarise {{style}} in a $& and $1 and $$ style.',
    });
  });

  it('fills embedded resources’ uri and text, and refuses a uri that is not absolute once filled', () => {
    const prompt = template({
      description: 'Embeds a file',
      arguments: [{ name: 'path', required: true }, { name: 'note' }],
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: '{{path}}', mimeType: 'text/plain', text: 'note: {{note}}' },
          },
        },
        {
          role: 'user',
          content: { type: 'resource', resource: { uri: 'mem://{{ path }}', blob: 'AAEC' } },
        },
        { role: 'assistant', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } },
      ],
    });
    expect(render(prompt, { path: 'file:///a.txt', note: '{{path}}' })).toEqual([
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'note: {{path}}' },
        },
      },
      {
        role: 'user',
        content: { type: 'resource', resource: { uri: 'mem://file:///a.txt', blob: 'AAEC' } },
      },
      { role: 'assistant', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } },
    ]);
    expect(codeThrown(() => render(prompt, { path: 'relative/a.txt' }))).toBe(
      'ERR_INVALID_ARGUMENT',
    );
    expect(messageThrown(() => render(prompt, { path: '' }))).toBe(
      'message 1 of prompt "summary" embeds a resource whose uri is not an absolute URI once its arguments are in: ""',
    );
  });

  it('refuses a render longer than the bound before building it, as ERR_RESULT_TOO_LARGE', () => {
    const prompt = template(SUMMARY);
    const values = { city: 'Paris', style: 'short' };
    // The bound is the answer's JSON, in bytes, as it will be sent.
    const size = Buffer.byteLength(JSON.stringify(answerOf(prompt, render(prompt, values))));
    expect(renderTemplate(prompt, values, size)).toHaveLength(2);
    expect(codeThrown(() => renderTemplate(prompt, values, size - 1))).toBe('ERR_RESULT_TOO_LARGE');
    // Placeholders multiply what a client sends: 100 of them times 10 000 characters.
    const echo = template({
      description: 'Echoes',
      arguments: [{ name: 'word', required: true }],
      messages: [{ role: 'user', content: { type: 'text', text: '{{word}}'.repeat(100) } }],
    });
    const envelope = Buffer.byteLength(JSON.stringify(answerOf(echo, render(echo, { word: '' }))));
    expect(messageThrown(() => renderTemplate(echo, { word: 'x'.repeat(10_000) }, 65_536))).toBe(
      `prompt "summary" would answer ${1_000_000 + envelope} bytes of JSON with these arguments, more than 65536 (TOOL_MAX_RESULT_BYTES)`,
    );
    expect(renderTemplate(echo, { word: 'x'.repeat(650) }, 65_536)[0]!.content).toEqual({
      type: 'text',
      text: 'x'.repeat(65_000),
    });
  });

  it('counts what JSON makes of the arguments: 6 bytes a control character, 2 a quote (issue 28)', () => {
    const echo = template({
      description: 'Echoes',
      arguments: [{ name: 'word', required: true }],
      messages: [
        { role: 'user', content: { type: 'text', text: 'say "{{word}}" twice: {{word}}' } },
      ],
    });
    for (const word of ['\u0001'.repeat(1_000), '"\\'.repeat(500), '\n\t\u001f\ud800é€😀']) {
      const answer = Buffer.byteLength(JSON.stringify(answerOf(echo, render(echo, { word }))));
      expect(renderTemplate(echo, { word }, answer)).toHaveLength(1);
      expect(codeThrown(() => renderTemplate(echo, { word }, answer - 1))).toBe(
        'ERR_RESULT_TOO_LARGE',
      );
    }
    // The finding: 1.04 MB of control characters answered as 6.24 MB under a 1 MiB bound.
    const controls = '\u0001'.repeat(1_040_000);
    expect(messageThrown(() => renderTemplate(echo, { word: controls }, 1_048_576))).toMatch(
      /would answer 124\d{5} bytes of JSON/,
    );
  });
});

describe('messagesFromCode', () => {
  const prompt = promptRecord({ description: 'coded', code: 'return "x";' }, 'coded');
  const image = { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' };

  it('takes a string, sdk.content blocks, [{role, content}] or {description, messages}', () => {
    expect(messagesFromCode(prompt, 'hello', undefined)).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }],
    });
    expect(messagesFromCode(prompt, null, [{ type: 'text', text: 'a' }, image])).toEqual({
      messages: [
        { role: 'user', content: { type: 'text', text: 'a' } },
        { role: 'user', content: image },
      ],
    });
    const conversation = [
      { role: 'user', content: { type: 'text', text: 'Describe this' } },
      { role: 'assistant', content: image },
    ];
    expect(messagesFromCode(prompt, conversation, undefined)).toEqual({ messages: conversation });
    expect(
      messagesFromCode(prompt, { description: 'dynamic', messages: conversation }, undefined),
    ).toEqual({ description: 'dynamic', messages: conversation });
  });

  it('refuses anything else as ERR_OUTPUT_INVALID, saying what it must return', () => {
    for (const value of [
      42,
      null,
      undefined,
      [],
      { text: 'x' },
      [{ role: 'system', content: { type: 'text', text: 'x' } }],
      [{ role: 'user', content: 'plain string' }],
      [{ role: 'user', content: { type: 'image', data: 'not base64!', mimeType: 'image/png' } }],
      [{ role: 'user', content: { type: 'text', text: 'x' }, extra: 1 }],
    ]) {
      expect(
        codeThrown(() => messagesFromCode(prompt, value, undefined)),
        JSON.stringify(value),
      ).toBe('ERR_OUTPUT_INVALID');
    }
    expect(messageThrown(() => messagesFromCode(prompt, 42, undefined))).toMatch(
      /^the code of prompt "coded" must return messages \(\[\{role, content\}\], a string or sdk\.content blocks\): /,
    );
  });
});

describe('contentsFromCode', () => {
  const weather = resourceRecord('weather', {
    uriTemplate: 'weather://{city}/today',
    code: 'return 1;',
  });
  const typed = resourceRecord('typed', {
    uriTemplate: 'csv://{name}',
    mimeType: 'text/csv',
    code: 'return 1;',
  });
  const uri = 'weather://Paris/today';

  it('makes a string text in the template’s MIME type (text/plain by default)', () => {
    expect(contentsFromCode(weather, uri, 'sunny', undefined)).toEqual([
      { uri, mimeType: 'text/plain', text: 'sunny' },
    ]);
    expect(contentsFromCode(typed, 'csv://x', 'a,b', undefined)).toEqual([
      { uri: 'csv://x', mimeType: 'text/csv', text: 'a,b' },
    ]);
  });

  it('makes any other value JSON text', () => {
    expect(contentsFromCode(weather, uri, { temp: 21, sky: 'clear' }, undefined)).toEqual([
      { uri, mimeType: 'application/json', text: '{"temp":21,"sky":"clear"}' },
    ]);
    expect(contentsFromCode(weather, uri, [1, 2], undefined)).toEqual([
      { uri, mimeType: 'application/json', text: '[1,2]' },
    ]);
    expect(contentsFromCode(weather, uri, undefined, undefined)).toEqual([
      { uri, mimeType: 'application/json', text: 'null' },
    ]);
  });

  it('turns blocks into contents: text, image and audio as blobs, embedded resources as they are', () => {
    expect(
      contentsFromCode(weather, uri, null, [
        { type: 'text', text: 'sunny' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'audio', data: 'UklG', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'other://x', mimeType: 'text/csv', text: 'a,b' } },
        { type: 'resource', resource: { uri: 'other://y', blob: 'AAEC' } },
      ]),
    ).toEqual([
      { uri, mimeType: 'text/plain', text: 'sunny' },
      { uri, mimeType: 'image/png', blob: 'AAAA' },
      { uri, mimeType: 'audio/wav', blob: 'UklG' },
      { uri: 'other://x', mimeType: 'text/csv', text: 'a,b' },
      { uri: 'other://y', blob: 'AAEC' },
    ]);
  });
});

describe('findResource', () => {
  const resources = [
    resourceRecord('a-any', { uriTemplate: 'weather://{+rest}', code: 'return 1;' }),
    resourceRecord('b-today', { uriTemplate: 'weather://{city}/today', code: 'return 1;' }),
    resourceRecord('c-paris', { uri: 'weather://Paris/today', text: 'static' }),
  ];

  it('prefers a static resource of the URI, then the first template by name that matches', () => {
    expect(findResource(resources, 'weather://Paris/today')).toEqual({ resource: resources[2] });
    const templated = findResource(resources, 'weather://Lisbon/today')!;
    expect(templated.resource.name).toBe('a-any');
    expect({ ...templated.variables }).toEqual({ rest: 'Lisbon/today' });
    expect(findResource(resources, 'docs://nothing')).toBeUndefined();
  });

  it('lets only the named resource answer when asked to', () => {
    const only = findResource(resources, 'weather://Lisbon/today', 'b-today')!;
    expect(only.resource.name).toBe('b-today');
    expect({ ...only.variables }).toEqual({ city: 'Lisbon' });
    expect(findResource(resources, 'weather://Paris/today', 'b-today')?.resource.name).toBe(
      'b-today',
    );
    expect(findResource(resources, 'weather://x/y/z', 'b-today')).toBeUndefined();
  });
});

describe('findResourceChanges', () => {
  const handbook = (version: number, uri = 'docs://handbook') =>
    resourceRecord('handbook', { uri, text: `v${version}` }, version);
  const weather = (version: number, uriTemplate = 'weather://{city}/today') =>
    resourceRecord('weather', { uriTemplate, code: `return ${version};` }, version);
  const byName = (...records: ResourceRecord[]) => new Map(records.map((r) => [r.name, r]));

  it('answers nothing when no resource changed', () => {
    const same = byName(handbook(1), weather(1));
    expect(findResourceChanges(same, same)).toBeUndefined();
    // Equal versions are unchanged even when the record objects differ (a reload).
    expect(
      findResourceChanges(byName(handbook(1), weather(1)), byName(handbook(1), weather(1))),
    ).toBeUndefined();
  });

  it('names what was saved, rolled back, added or deleted, with static URIs before and after', () => {
    expect(
      findResourceChanges(byName(handbook(1), weather(1)), byName(handbook(2), weather(1))),
    ).toEqual({ names: new Set(['handbook']), uris: new Set(['docs://handbook']) });
    expect(findResourceChanges(byName(handbook(1)), byName(handbook(2, 'docs://moved')))).toEqual({
      names: new Set(['handbook']),
      uris: new Set(['docs://handbook', 'docs://moved']),
    });
    expect(findResourceChanges(byName(handbook(1), weather(1)), byName(weather(1)))).toEqual({
      names: new Set(['handbook']),
      uris: new Set(['docs://handbook']),
    });
    expect(findResourceChanges(byName(), byName(handbook(1)))).toEqual({
      names: new Set(['handbook']),
      uris: new Set(['docs://handbook']),
    });
    expect(findResourceChanges(byName(weather(1)), byName(weather(2, 'weather://{city}')))).toEqual(
      { names: new Set(['weather']), uris: new Set() },
    );
  });
});

describe('ResourceSubscriptions', () => {
  it('owes an update to a URI whose serving resource changed, or whose static URI changed', () => {
    const subscriptions = new ResourceSubscriptions();
    subscriptions.add('docs://handbook', 'handbook');
    subscriptions.add('weather://Paris/today', 'weather');
    subscriptions.add('weather://Oslo/today', 'weather');
    subscriptions.add('docs://soon', 'catch-all');
    expect(subscriptions.size).toBe(4);
    const changes = (names: string[], uris: string[] = []) => ({
      names: new Set(names),
      uris: new Set(uris),
    });
    expect(subscriptions.affected(changes(['weather']))).toEqual([
      'weather://Paris/today',
      'weather://Oslo/today',
    ]);
    expect(subscriptions.affected(changes(['handbook'], ['docs://handbook']))).toEqual([
      'docs://handbook',
    ]);
    // A static resource now answering a URI a template served.
    expect(subscriptions.affected(changes(['soon'], ['docs://soon']))).toEqual(['docs://soon']);
    expect(subscriptions.affected(changes(['other'], ['docs://other']))).toEqual([]);
    subscriptions.delete('weather://Oslo/today');
    expect(subscriptions.affected(changes(['weather']))).toEqual(['weather://Paris/today']);
  });

  it('holds at most 1000 URIs; one it holds already is no new one', () => {
    const subscriptions = new ResourceSubscriptions();
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_SESSION; i++) subscriptions.add(`d://${i}`, 'd');
    expect(codeThrown(() => subscriptions.add('d://new', 'd'))).toBe('ERR_VALIDATION');
    subscriptions.add('d://0', 'other');
    expect(subscriptions.affected({ names: new Set(['other']), uris: new Set() })).toEqual([
      'd://0',
    ]);
    subscriptions.delete('d://1');
    subscriptions.add('d://new', 'd');
    expect(subscriptions.size).toBe(MAX_SUBSCRIPTIONS_PER_SESSION);
  });
});

describe('promptDefinitionSchema', () => {
  const problems = (definition: unknown) => {
    const parsed = promptDefinitionSchema.safeParse(definition);
    expect(parsed.success, JSON.stringify(definition)).toBe(false);
    return parsed.error!.issues.map((issue) => ({
      path: issue.path.join('.'),
      message: issue.message,
    }));
  };

  it('fills the defaults of a valid prompt', () => {
    expect(promptDefinitionSchema.parse({ description: 'd', code: 'return "x";' })).toMatchObject({
      arguments: [],
      secrets: [],
      limits: {},
    });
    expect(promptDefinitionSchema.parse(SUMMARY).arguments).toEqual([
      { name: 'city', required: true },
      { name: 'style', required: false },
    ]);
  });

  it('refuses each invalid definition, naming where', () => {
    const text = (t: string) => [{ role: 'user', content: { type: 'text', text: t } }];
    const refusals: [string, unknown, string, RegExp][] = [
      ['both messages and code', { ...SUMMARY, code: 'return 1;' }, 'messages', /exactly one/],
      ['neither', { description: 'd' }, 'messages', /exactly one/],
      [
        'an argument twice',
        { ...SUMMARY, arguments: [{ name: 'city' }, { name: 'city' }, { name: 'style' }] },
        'arguments.1.name',
        /declared twice/,
      ],
      [
        'an undeclared placeholder',
        { description: 'd', messages: text('Hi {{who}}') },
        'messages.0.content',
        /\{\{who\}\} is not a declared argument/,
      ],
      [
        'an argument name that is no identifier',
        { description: 'd', arguments: [{ name: '1st' }], code: 'return 1;' },
        'arguments.0.name',
        /letters, digits and _/,
      ],
      [
        'an argument named __proto__',
        { description: 'd', arguments: [{ name: '__proto__' }], code: 'return 1;' },
        'arguments.0.name',
        /__proto__, constructor or prototype/,
      ],
      [
        'more than 64 arguments',
        {
          description: 'd',
          arguments: Array.from({ length: 65 }, (_, i) => ({ name: `a${i}` })),
          code: 'return 1;',
        },
        'arguments',
        /64/,
      ],
      [
        'a system message',
        { description: 'd', messages: [{ role: 'system', content: { type: 'text', text: 'x' } }] },
        'messages.0.role',
        /./,
      ],
      [
        'an embedded resource with a relative uri',
        {
          description: 'd',
          messages: [
            { role: 'user', content: { type: 'resource', resource: { uri: 'a.txt', text: 'x' } } },
          ],
        },
        'messages.0.content.resource.uri',
        /absolute URI/,
      ],
      ['no messages', { description: 'd', messages: [] }, 'messages', /./],
      [
        'an unknown field',
        { description: 'd', code: 'return 1;', temperature: 1 },
        '',
        /temperature/,
      ],
      [
        'completion values that are not strings',
        { description: 'd', arguments: [{ name: 'a', complete: { values: [1] } }], code: 'x' },
        'arguments.0.complete',
        /./,
      ],
    ];
    for (const [what, definition, path, message] of refusals) {
      const found = problems(definition);
      expect(
        found.some((p) => p.path.startsWith(path) && message.test(p.message)),
        `${what}: ${JSON.stringify(found)}`,
      ).toBe(true);
    }
  });
});

describe('resourceDefinitionSchema', () => {
  const HANDBOOK = { uri: 'docs://handbook', mimeType: 'text/markdown', text: '# Handbook' };
  const WEATHER = { uriTemplate: 'weather://{city}/today', code: 'return params.city;' };

  it('accepts a static resource and a template', () => {
    expect(resourceDefinitionSchema.parse(HANDBOOK)).toMatchObject({ ...HANDBOOK, secrets: [] });
    expect(resourceDefinitionSchema.parse({ uri: 'docs://b', blob: 'AAEC' })).toMatchObject({
      blob: 'AAEC',
    });
    expect(
      resourceDefinitionSchema.parse({
        ...WEATHER,
        complete: { city: { values: ['Paris'] } },
        secrets: ['KEY'],
      }),
    ).toMatchObject({ complete: { city: { values: ['Paris'] } }, secrets: ['KEY'] });
  });

  it('refuses each invalid definition, naming where', () => {
    const refusals: [string, unknown, string, RegExp][] = [
      ['both', { ...HANDBOOK, uriTemplate: 'docs://{a}' }, 'uri', /exactly one/],
      ['neither', { text: 'x' }, 'uri', /exactly one/],
      ['text and blob', { ...HANDBOOK, blob: 'AAEC' }, 'text', /exactly one/],
      ['no contents', { uri: 'docs://x' }, 'text', /exactly one/],
      ['a relative uri', { uri: 'handbook', text: 'x' }, 'uri', /absolute URI/],
      ['a blob not base64', { uri: 'docs://x', blob: 'not base64!' }, 'blob', /base64/],
      ['static with code', { ...HANDBOOK, code: 'return 1;' }, 'code', /resource template/],
      [
        'static with completions',
        { ...HANDBOOK, complete: { a: { values: [] } } },
        'complete',
        /resource template/,
      ],
      ['static with secrets', { ...HANDBOOK, secrets: ['KEY'] }, 'secrets', /no secrets/],
      ['template with text', { ...WEATHER, text: 'x' }, 'text', /from its code/],
      ['template with blob', { ...WEATHER, blob: 'AAEC' }, 'blob', /from its code/],
      ['template without code', { uriTemplate: WEATHER.uriTemplate }, 'code', /needs code/],
      ['an exploded variable', { ...WEATHER, uriTemplate: 'w://{a*}' }, 'uriTemplate', /explode/],
      ['no scheme', { ...WEATHER, uriTemplate: '{city}' }, 'uriTemplate', /scheme/],
      [
        'a completion of no variable',
        { ...WEATHER, complete: { town: { values: ['x'] } } },
        'complete',
        /"town" is not a variable of weather:\/\/\{city\}\/today/,
      ],
      [
        'a completion with both values and code',
        { ...WEATHER, complete: { city: { values: ['x'], code: 'return [];' } } },
        'complete.city',
        /./,
      ],
      [
        'more than 1000 completion values',
        { ...WEATHER, complete: { city: { values: Array.from({ length: 1001 }, String) } } },
        'complete.city',
        /./,
      ],
      [
        'bad annotations',
        { ...HANDBOOK, annotations: { priority: 2 } },
        'annotations.priority',
        /./,
      ],
      ['a bad MIME type', { ...HANDBOOK, mimeType: 'markdown' }, 'mimeType', /MIME type/],
    ];
    for (const [what, definition, path, message] of refusals) {
      const parsed = resourceDefinitionSchema.safeParse(definition);
      expect(parsed.success, what).toBe(false);
      const found = parsed.error!.issues.map((issue) => ({
        path: issue.path.join('.'),
        message: issue.message,
      }));
      expect(
        found.some((p) => p.path.startsWith(path) && message.test(p.message)),
        `${what}: ${JSON.stringify(found)}`,
      ).toBe(true);
    }
  });
});
