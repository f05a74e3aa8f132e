/**
 * What validating against a tool schema can cost, read from the schema
 * (control-plane/store/tool-schema-cost.ts), and the save-time refusal built
 * on it (issue 28, finding 4): schemas whose work multiplies with each level
 * of a value, or is huge at one place, are refused naming the subschema;
 * recursive schemas that are linear (trees, expressions) are kept.
 */
import { describe, expect, it } from 'vitest';
import { toolSchemaProblems } from '../../control-plane/store/tool-json-schema.js';
import { schemaCost, TOOL_SCHEMA_MAX_WEIGHT } from '../../control-plane/store/tool-schema-cost.js';

/** Each level validates the child twice: a minute at 30 levels. */
const EXPONENTIAL = {
  type: 'object',
  $defs: {
    n: {
      anyOf: [
        { allOf: [{ properties: { a: { $ref: '#/$defs/n' } } }, { required: ['never'] }] },
        { properties: { a: { $ref: '#/$defs/n' } } },
      ],
    },
  },
  properties: { a: { $ref: '#/$defs/n' } },
};

/** Definitions that each apply the next one twice: 2^30 evaluations of one place. */
function doubling(levels: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = { [`d${levels}`]: { type: 'string' } };
  for (let i = 0; i < levels; i++) {
    $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  }
  return { type: 'object', $defs, properties: { x: { $ref: '#/$defs/d0' } } };
}

describe('schemaCost', () => {
  it('gives linear schemas, recursive ones included, a small weight', () => {
    const schemas = {
      flat: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      tree: {
        type: 'object',
        properties: {
          value: { type: 'number' },
          left: { $ref: '#' },
          right: { $ref: '#' },
          children: { type: 'array', items: { $ref: '#' } },
        },
      },
      expression: {
        type: 'object',
        $defs: {
          e: {
            oneOf: [
              { type: 'number' },
              {
                type: 'object',
                properties: {
                  op: { enum: ['+', '-'] },
                  args: { type: 'array', items: { $ref: '#/$defs/e' } },
                },
                required: ['op', 'args'],
              },
            ],
          },
        },
        properties: { expr: { $ref: '#/$defs/e' } },
      },
      // additionalProperties applies only to names `properties` does not list.
      named: {
        type: 'object',
        properties: { child: { $ref: '#' } },
        additionalProperties: { $ref: '#' },
      },
    };
    for (const [name, schema] of Object.entries(schemas)) {
      const cost = schemaCost(schema);
      expect(cost, name).toMatchObject({ kind: 'bounded' });
      expect((cost as { weight: number }).weight, name).toBeLessThan(20);
      expect(toolSchemaProblems(schema), name).toEqual([]);
    }
  });

  it('counts a pattern by its RE2 program, and refuses one that costs too much per character', () => {
    const cost = schemaCost({ type: 'object', properties: { s: { pattern: '^[a-z]{500}$' } } });
    expect(cost).toMatchObject({ kind: 'bounded' });
    expect((cost as { weight: number }).weight).toBeGreaterThan(500);
    const huge = { type: 'object', properties: { s: { pattern: '[a-z]{1000}'.repeat(12) } } };
    expect(toolSchemaProblems(huge)).toEqual([
      {
        path: 'properties.s',
        message: expect.stringMatching(
          /its keywords cost 120\d\d steps there \(a pattern costs its RE2 program/,
        ),
      },
    ]);
  });

  it('finds work that multiplies with each level of a value, and names where', () => {
    expect(schemaCost(EXPONENTIAL)).toMatchObject({
      kind: 'unbounded',
      path: expect.stringMatching(/^\$defs\.n/),
    });
    // Growth by one each level (quadratic in the depth) is found too.
    const adding = {
      type: 'object',
      $defs: {
        a: { properties: { x: { $ref: '#/$defs/a' } }, allOf: [{ $ref: '#/$defs/b' }] },
        b: { properties: { x: { $ref: '#/$defs/b' } } },
      },
      properties: { x: { $ref: '#/$defs/a' } },
    };
    expect(schemaCost(adding)).toMatchObject({ kind: 'unbounded', path: '$defs.b' });
    expect(toolSchemaProblems(adding)).toEqual([
      { path: '$defs.b', message: expect.stringMatching(/more often at each level/) },
    ]);
  });

  it(`refuses more than ${TOOL_SCHEMA_MAX_WEIGHT} steps at one place, and references that never go into the value`, () => {
    expect(toolSchemaProblems(doubling(30))).toEqual([
      {
        path: expect.stringMatching(/^\$defs\.d\d+$/),
        message: expect.stringMatching(
          /^makes checking one place of a value take more than 10000 steps .*: it is applied over and over there/,
        ),
      },
    ]);
    expect(schemaCost(doubling(5))).toMatchObject({ kind: 'bounded' });
    const loop = {
      type: 'object',
      $defs: { a: { allOf: [{ $ref: '#/$defs/a' }] } },
      properties: { x: { $ref: '#/$defs/a' } },
    };
    expect(toolSchemaProblems(loop)).toEqual([
      { path: '$defs.a', message: expect.stringMatching(/without going into the value/) },
    ]);
  });

  it('calls unknown what it does not follow, and saves it (checked as possibly slow)', () => {
    const dynamic = {
      type: 'object',
      $dynamicAnchor: 'node',
      properties: { a: { $dynamicRef: '#node' } },
    };
    expect(schemaCost(dynamic)).toMatchObject({ kind: 'unknown' });
    const pairwise = {
      type: 'object',
      properties: { xs: { type: 'array', uniqueItems: true, maxItems: 10 } },
    };
    expect(schemaCost(pairwise)).toMatchObject({ kind: 'unknown' });
    expect(toolSchemaProblems(pairwise)).toEqual([]);
  });

  it('reads a large schema within its bounded work', () => {
    const fields: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) fields[`p${i}`] = { type: 'integer', minimum: i };
    const uses: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) uses[`r${i}`] = { $ref: '#/$defs/a' };
    const schema = {
      type: 'object',
      $defs: { a: { type: 'object', properties: fields } },
      properties: uses,
    };
    expect(schemaCost(schema)).toMatchObject({ kind: 'bounded' });
    // Too little work allowed: unknown, never a wrong answer.
    expect(schemaCost(schema, 100)).toMatchObject({ kind: 'unknown' });
  });
});
