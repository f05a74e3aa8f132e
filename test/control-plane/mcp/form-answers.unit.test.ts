/**
 * The forms of `sdk.elicit` (control-plane/mcp/form-schema.ts,
 * form-formats.ts, elicitation-answers.ts): a form is rebuilt of the MCP
 * elicitation keywords only (PrimitiveSchemaDefinition, 2025-11-25 and
 * 2026-07-28), and an answer is checked by reading those keywords, with no
 * schema compiled, no tenant pattern run and nothing kept (hostile review 29,
 * findings 1 and 2).
 */
import { ElicitRequestFormParamsSchema } from '@modelcontextprotocol/core';
import { describe, expect, it } from 'vitest';
import * as elicitationAnswers from '../../../control-plane/mcp/elicitation-answers.js';
import {
  FORM_ANSWERS,
  restrictedFormRequest,
} from '../../../control-plane/mcp/elicitation-answers.js';
import * as formSchema from '../../../control-plane/mcp/form-schema.js';
import { answerProblem, restrictedForm } from '../../../control-plane/mcp/form-schema.js';

/** What `sdk.elicit` makes of a tool's form: the SDK's parse, then the rebuild. */
function asked(requestedSchema: object) {
  const parsed = ElicitRequestFormParamsSchema.parse({
    mode: 'form',
    message: 'Q?',
    requestedSchema,
  });
  return restrictedFormRequest('sdk.elicit', parsed).requestedSchema;
}

/** The verdict of the validator the SDK is given, as the legacy era uses it. */
function verdict(schema: object, content: unknown) {
  return FORM_ANSWERS.getValidator(schema as never)(content);
}

const BACKTRACKING = '^(a|a)*$';
const EVIL_TEXT = `${'a'.repeat(40)}!`;

describe('a form is rebuilt of MCP keywords only', () => {
  it('drops every top-level keyword MCP does not define, through the SDK parse', () => {
    const form = asked({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://evil.example/form',
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
      allOf: [{ properties: { name: { pattern: BACKTRACKING } } }],
      anyOf: [{ $ref: '#/$defs/evil' }],
      $defs: { evil: { properties: { name: { pattern: BACKTRACKING } } } },
      definitions: { evil: { pattern: BACKTRACKING } },
      $ref: '#/$defs/evil',
      patternProperties: { [BACKTRACKING]: { type: 'string' } },
      propertyNames: { pattern: BACKTRACKING },
      additionalProperties: false,
      dependentSchemas: { name: { $ref: '#/$defs/evil' } },
      if: { properties: { name: { const: 'x' } } },
      then: { $ref: '#/$defs/evil' },
      not: {},
    });
    expect(form).toEqual({
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
    });
  });

  it('drops keywords MCP does not define inside a field, whoever parsed it', () => {
    const form = restrictedForm('sdk.elicit', {
      type: 'object',
      properties: {
        name: {
          type: 'string',
          title: 'Name',
          maxLength: 20,
          pattern: BACKTRACKING,
          allOf: [{ pattern: BACKTRACKING }],
          $ref: '#/x',
          format: 'regex',
        },
        colour: { type: 'array', items: { type: 'string', enum: ['red'], pattern: BACKTRACKING } },
        size: { type: 'number', minimum: 1, exclusiveMaximum: 3, multipleOf: 0.5 },
      },
    });
    expect(form.properties).toEqual({
      name: { type: 'string', title: 'Name', maxLength: 20 },
      colour: { type: 'array', items: { type: 'string', enum: ['red'] } },
      size: { type: 'number', minimum: 1 },
    });
  });

  it('keeps every primitive kind of the specification whole', () => {
    const properties = {
      text: {
        type: 'string',
        title: 'T',
        description: 'D',
        minLength: 1,
        maxLength: 9,
        format: 'email',
        default: 'a@b',
      },
      count: { type: 'integer', title: 'C', minimum: 0, maximum: 5, default: 2 },
      ratio: { type: 'number', description: 'R', minimum: -1.5, maximum: 1.5 },
      ok: { type: 'boolean', title: 'OK', default: false },
      plain: { type: 'string', enum: ['a', 'b'], default: 'a' },
      legacy: { type: 'string', enum: ['a', 'b'], enumNames: ['A', 'B'] },
      titled: { type: 'string', oneOf: [{ const: 'a', title: 'A' }], default: 'a' },
      many: {
        type: 'array',
        minItems: 1,
        maxItems: 2,
        items: { type: 'string', enum: ['a', 'b', 'c'] },
        default: ['a'],
      },
      manyTitled: { type: 'array', items: { anyOf: [{ const: 'a', title: 'A' }] } },
    };
    expect(asked({ type: 'object', properties })).toEqual({ type: 'object', properties });
  });

  it('keeps a field named __proto__ as the form’s own field', () => {
    const form = restrictedForm(
      'sdk.elicit',
      JSON.parse(
        '{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"]}',
      ),
    );
    expect(Object.hasOwn(form.properties, '__proto__')).toBe(true);
    expect(answerProblem(form, {})).toBe('field "__proto__" is required');
    expect(answerProblem(form, JSON.parse('{"__proto__":"x"}'))).toBeUndefined();
  });

  it('refuses a field that is no MCP primitive, naming it', () => {
    for (const field of [
      { type: 'object', properties: {} },
      { type: 'null' },
      { allOf: [] },
      { type: 'string', enum: [1, 2] },
      { type: 'string', oneOf: [{ const: 'a' }] },
      { type: 'array', items: { type: 'string' } },
      'string',
    ]) {
      expect(() =>
        restrictedForm('sdk.elicit', { type: 'object', properties: { nested: field } }),
      ).toThrow(
        expect.objectContaining({
          code: 'ERR_INVALID_ARGUMENT',
          message: expect.stringMatching(/^sdk\.elicit: requestedSchema\.properties\.nested /),
        }),
      );
    }
  });

  it('still bounds the form’s size', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 65 }, (_, i) => [`field${i}`, { type: 'string' }]),
    );
    expect(() => asked({ type: 'object', properties })).toThrow(
      /65 properties; a form may have at most 64/,
    );
  });
});

describe('an answer is checked by reading the form’s keywords', () => {
  it('does not run a pattern a tool hid in its form (the reproduction of finding 1)', () => {
    const hostile = {
      type: 'object',
      properties: { name: { type: 'string' } },
      allOf: [{ properties: { name: { pattern: BACKTRACKING } } }],
    };
    expect(verdict(hostile, { name: EVIL_TEXT })).toEqual({
      valid: true,
      data: { name: EVIL_TEXT },
      errorMessage: undefined,
    });
  });

  const cases: [string, object, unknown[], unknown[]][] = [
    ['boolean', { type: 'boolean' }, [true, false], ['true', 0, null, []]],
    ['number', { type: 'number', minimum: -1, maximum: 1 }, [-1, 0, 0.5, 1], [-1.01, 2, '0', true]],
    ['integer', { type: 'integer', minimum: 1 }, [1, 7, 2e3], [0, 1.5, '2', null]],
    [
      'string',
      { type: 'string', minLength: 2, maxLength: 3 },
      ['ab', 'abc', '😀😀😀'],
      ['a', 'abcd', 4, ['ab']],
    ],
    ['untitled enum', { type: 'string', enum: ['a', 'b'] }, ['a', 'b'], ['c', 'A', 1]],
    ['legacy enum', { type: 'string', enum: ['a'], enumNames: ['A'] }, ['a'], ['A']],
    [
      'titled enum',
      {
        type: 'string',
        oneOf: [
          { const: 'a', title: 'A' },
          { const: 'b', title: 'B' },
        ],
      },
      ['a', 'b'],
      ['A', 'c', ['a']],
    ],
    [
      'untitled multi-select',
      { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string', enum: ['a', 'b', 'c'] } },
      [['a'], ['a', 'c']],
      [[], ['a', 'b', 'c'], ['d'], ['a', 1], 'a'],
    ],
    [
      'titled multi-select',
      { type: 'array', items: { anyOf: [{ const: 'a', title: 'A' }] } },
      [[], ['a'], ['a', 'a']],
      [['A'], ['b'], 'a'],
    ],
  ];

  for (const [kind, field, accepted, refused] of cases) {
    it(`accepts and refuses a ${kind} field, naming it`, () => {
      const schema = { type: 'object', properties: { answer: field } };
      for (const value of accepted) {
        expect(verdict(schema, { answer: value }).errorMessage, JSON.stringify(value)).toBe(
          undefined,
        );
      }
      for (const value of refused) {
        const result = verdict(schema, { answer: value });
        expect(result.valid, JSON.stringify(value)).toBe(false);
        expect(result.errorMessage).toMatch(/^field "answer" must /);
      }
    });
  }

  it('refuses an answer without a required field, and one that is no object', () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name'],
    };
    expect(verdict(schema, { age: 3 }).errorMessage).toBe('field "name" is required');
    expect(verdict(schema, { name: 'Ada' }).valid).toBe(true);
    expect(verdict(schema, ['Ada']).valid).toBe(false);
    expect(verdict(schema, null).valid).toBe(false);
  });

  it('says what the bound is', () => {
    const schema = {
      type: 'object',
      properties: {
        count: { type: 'integer', minimum: 1 },
        name: { type: 'string', maxLength: 3 },
      },
    };
    expect(verdict(schema, { count: 0 }).errorMessage).toBe('field "count" must be at least 1');
    expect(verdict(schema, { name: 'abcd' }).errorMessage).toBe(
      'field "name" must be at most 3 characters',
    );
  });

  it('counts a 100 KB answer against maxLength in code points', () => {
    const schema = { type: 'object', properties: { text: { type: 'string', maxLength: 100_000 } } };
    expect(verdict(schema, { text: 'a'.repeat(100_000) }).valid).toBe(true);
    expect(verdict(schema, { text: 'a'.repeat(100_001) }).valid).toBe(false);
    // A pair of surrogates is one character; a lone one counts as one too.
    expect(verdict(schema, { text: '😀'.repeat(100_000) }).valid).toBe(true);
    expect(verdict(schema, { text: `${'😀'.repeat(99_999)}\ud800\ud800` }).valid).toBe(false);
  });

  it('checks a long multi-select against many options', () => {
    const options = Array.from({ length: 5_000 }, (_, i) => `option-${i}`);
    const schema = {
      type: 'object',
      properties: { picks: { type: 'array', items: { type: 'string', enum: options } } },
    };
    const picks = Array.from({ length: 100_000 }, (_, i) => options[i % options.length]);
    expect(verdict(schema, { picks }).valid).toBe(true);
    expect(verdict(schema, { picks: [...picks, 'option-5000'] }).valid).toBe(false);
  });
});

describe('formats are checked without regular expressions', () => {
  const formats: [string, string[], string[]][] = [
    [
      'email',
      ['ada@example.org', 'a.b+c@x', 'ada@sub.example.co'],
      ['ada', '@example.org', 'ada@', 'a@b@c', 'ada @x.org', 'ada@.x', 'ada@x..org', 'ada@x.'],
    ],
    [
      'uri',
      ['https://example.org/a?b#c', 'mailto:ada@example.org', 'urn:isbn:0451450523'],
      ['example.org', '/relative', 'https://exa mple.org', '', 'http://[::1'],
    ],
    [
      'date',
      ['2026-07-28', '2024-02-29', '2000-02-29'],
      ['2026-7-28', '2026-13-01', '2026-02-29', '1900-02-29', '2026-04-31', '2026-07-28T00:00:00Z'],
    ],
    [
      'date-time',
      [
        '2026-07-28T10:20:30Z',
        '2026-07-28t10:20:30z',
        '2026-07-28 10:20:30.123456+02:00',
        '2016-12-31T23:59:60-05:30',
      ],
      [
        '2026-07-28',
        '2026-07-28T10:20Z',
        '2026-07-28T24:00:00Z',
        '2026-07-28T10:20:30',
        '2026-07-28T10:20:30.Z',
        '2026-07-28T10:20:30+0200',
        '2026-07-28T10:20:30+02:00x',
      ],
    ],
  ];

  for (const [format, accepted, refused] of formats) {
    it(`accepts and refuses format "${format}"`, () => {
      const schema = { type: 'object', properties: { value: { type: 'string', format } } };
      for (const value of accepted) expect(verdict(schema, { value }).valid, value).toBe(true);
      for (const value of [...refused, `${'a'.repeat(100_000)}!`]) {
        const result = verdict(schema, { value });
        expect(result.valid, value.slice(0, 40)).toBe(false);
        expect(result.errorMessage).toBe(`field "value" must be written as format "${format}"`);
      }
    });
  }
});

describe('the validator keeps nothing', () => {
  it('is one frozen object with one method, and the modules hold no cache', () => {
    expect(Object.isFrozen(FORM_ANSWERS)).toBe(true);
    expect(Object.getOwnPropertyNames(FORM_ANSWERS)).toEqual(['getValidator']);
    for (const module of [formSchema, elicitationAnswers]) {
      for (const [name, value] of Object.entries(module)) {
        const kept = value instanceof Map || value instanceof Set || value instanceof WeakMap;
        expect(kept, name).toBe(false);
      }
    }
  });

  it('reads its own copy of the form, not the tool’s object', () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string', maxLength: 3 } } as Record<string, object>,
    };
    const validate = FORM_ANSWERS.getValidator(schema as never);
    schema.properties.name = { type: 'string', allOf: [{ pattern: BACKTRACKING }] };
    expect(validate({ name: 'abcd' }).valid).toBe(false);
    expect(validate({ name: EVIL_TEXT.slice(0, 3) }).valid).toBe(true);
  });
});
