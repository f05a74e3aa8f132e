/**
 * The forms tool code asks a person to fill in (`sdk.elicit`), reduced to
 * what MCP defines (`PrimitiveSchemaDefinition`, alike in 2025-11-25 and
 * 2026-07-28): a flat object of string, number, integer, boolean and enum
 * fields, and the check of a client's answer against such a form.
 *
 * The SDK's parse of the request keeps any extra top-level keyword of the
 * form (`allOf`, `$defs`, `patternProperties`, …): a general JSON Schema
 * engine would then compile what the tenant wrote and run its `pattern`s on
 * the control plane's thread, over text a client chose. So a form is
 * rebuilt from MCP's keywords alone before it is stored, sent or used, and
 * its answer is checked by reading those keywords here: no code generated,
 * no regular expression built from a tenant's text, nothing kept between
 * checks. Every check is linear in the form and the answer.
 */
import type { PrimitiveSchemaDefinition } from '@modelcontextprotocol/server';
import { McphostError } from '../errors.js';
import { FORM_FORMATS, matchesFormat, type FormFormat } from './form-formats.js';

/** One field of a form: a primitive of the MCP elicitation schema, with no other keyword. */
export type FormField = PrimitiveSchemaDefinition;

/**
 * A form as MCP allows it: the only shape stored, sent to a client or checked.
 * (A type, not an interface, so that it stays assignable to the SDK's
 * open-ended `requestedSchema`.)
 */
export type Form = {
  type: 'object';
  properties: Record<string, FormField>;
  required?: string[];
};

/** An option of a titled enum: the value sent back, and what the person reads. */
interface TitledOption {
  const: string;
  title: string;
}

/**
 * `schema` rebuilt of MCP's form keywords only; every other keyword, at any
 * level, is dropped. Refuses (ERR_INVALID_ARGUMENT, naming `name` and the
 * field) a property that is no MCP primitive at all.
 */
export function restrictedForm(name: string, schema: unknown): Form {
  const source = isRecord(schema) ? schema : {};
  const properties: [string, FormField][] = [];
  for (const [field, definition] of Object.entries(
    isRecord(source.properties) ? source.properties : {},
  )) {
    const restricted = restrictedField(definition);
    if (restricted === undefined) {
      throw new McphostError(
        'ERR_INVALID_ARGUMENT',
        `${name}: requestedSchema.properties.${field} is not a field a form may have (a string, number, integer, boolean or enum, as MCP defines them)`,
      );
    }
    properties.push([field, restricted]);
  }
  const required = strings(source.required);
  // Object.fromEntries defines each name as the form's own (`__proto__` included).
  return {
    type: 'object',
    properties: Object.fromEntries(properties),
    ...(required === undefined ? {} : { required }),
  };
}

/** Why `content` is no answer to `form` (naming the field), or undefined when it is one. */
export function answerProblem(form: Form, content: unknown): string | undefined {
  if (!isRecord(content)) return 'the content must be an object of the form’s fields';
  for (const field of form.required ?? []) {
    if (!Object.hasOwn(content, field)) return `field ${quoted(field)} is required`;
  }
  for (const [field, definition] of Object.entries(form.properties)) {
    if (!Object.hasOwn(content, field)) continue;
    const problem = fieldProblem(definition, content[field]);
    if (problem !== undefined) return `field ${quoted(field)} ${problem}`;
  }
  return undefined;
}

/** The primitive `definition` describes, of its MCP keywords only; undefined when it is none. */
function restrictedField(definition: unknown): FormField | undefined {
  if (!isRecord(definition)) return undefined;
  const label = {
    ...pick(definition, 'title', isString),
    ...pick(definition, 'description', isString),
  };
  switch (definition.type) {
    case 'boolean':
      return { type: 'boolean', ...label, ...pick(definition, 'default', isBoolean) };
    case 'number':
    case 'integer':
      return {
        type: definition.type,
        ...label,
        ...pick(definition, 'minimum', isFiniteNumber),
        ...pick(definition, 'maximum', isFiniteNumber),
        ...pick(definition, 'default', isFiniteNumber),
      };
    case 'string':
      return restrictedStringField(definition, label);
    case 'array':
      return restrictedSelectionField(definition, label);
    default:
      return undefined;
  }
}

/** A text field, or a single choice (untitled `enum`, legacy `enumNames`, titled `oneOf`). */
function restrictedStringField(
  definition: Record<string, unknown>,
  label: { title?: string; description?: string },
): FormField | undefined {
  const byDefault = pick(definition, 'default', isString);
  // The SDK's parse tries `enum` before `oneOf`; so does this.
  if (definition.enum !== undefined) {
    const values = strings(definition.enum);
    if (values === undefined) return undefined;
    const names = strings(definition.enumNames);
    return {
      type: 'string',
      ...label,
      enum: values,
      ...(names === undefined ? {} : { enumNames: names }),
      ...byDefault,
    };
  }
  if (definition.oneOf !== undefined) {
    const options = titledOptions(definition.oneOf);
    return options === undefined
      ? undefined
      : { type: 'string', ...label, oneOf: options, ...byDefault };
  }
  const format = FORM_FORMATS.find((known) => known === definition.format);
  return {
    type: 'string',
    ...label,
    ...pick(definition, 'minLength', isFiniteNumber),
    ...pick(definition, 'maxLength', isFiniteNumber),
    ...(format === undefined ? {} : { format }),
    ...byDefault,
  };
}

/** A multiple choice: `items` of an untitled `enum` or of titled `anyOf` options. */
function restrictedSelectionField(
  definition: Record<string, unknown>,
  label: { title?: string; description?: string },
): FormField | undefined {
  const items = definition.items;
  if (!isRecord(items)) return undefined;
  const bounds = {
    ...label,
    ...pick(definition, 'minItems', isFiniteNumber),
    ...pick(definition, 'maxItems', isFiniteNumber),
  };
  const byDefault = strings(definition.default);
  const withDefault = byDefault === undefined ? {} : { default: byDefault };
  if (items.enum !== undefined) {
    const values = strings(items.enum);
    if (values === undefined) return undefined;
    return { type: 'array', ...bounds, items: { type: 'string', enum: values }, ...withDefault };
  }
  const options = titledOptions(items.anyOf);
  if (options === undefined) return undefined;
  return { type: 'array', ...bounds, items: { anyOf: options }, ...withDefault };
}

function fieldProblem(definition: FormField, value: unknown): string | undefined {
  switch (definition.type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (definition.type === 'integer' && !Number.isInteger(value)) return 'must be an integer';
      if (definition.minimum !== undefined && value < definition.minimum)
        return `must be at least ${definition.minimum}`;
      if (definition.maximum !== undefined && value > definition.maximum)
        return `must be at most ${definition.maximum}`;
      return undefined;
    }
    case 'string': {
      if (typeof value !== 'string') return 'must be text';
      if ('enum' in definition) return oneOfProblem(definition.enum, value);
      if ('oneOf' in definition)
        return oneOfProblem(
          definition.oneOf.map((option) => option.const),
          value,
        );
      return textProblem(definition, value);
    }
    case 'array':
      return selectionProblem(definition, value);
  }
}

function oneOfProblem(values: readonly string[], value: string): string | undefined {
  return values.includes(value) ? undefined : `must be one of its ${values.length} options`;
}

function textProblem(
  definition: { minLength?: number; maxLength?: number; format?: FormFormat },
  value: string,
): string | undefined {
  if (definition.minLength !== undefined || definition.maxLength !== undefined) {
    const length = codePoints(value);
    if (definition.minLength !== undefined && length < definition.minLength)
      return `must be at least ${definition.minLength} characters`;
    if (definition.maxLength !== undefined && length > definition.maxLength)
      return `must be at most ${definition.maxLength} characters`;
  }
  if (definition.format !== undefined && !matchesFormat(definition.format, value))
    return `must be written as format "${definition.format}"`;
  return undefined;
}

function selectionProblem(
  definition: Extract<FormField, { type: 'array' }>,
  value: unknown,
): string | undefined {
  if (!Array.isArray(value)) return 'must be a list of options';
  // The bounds first: a long list costs nothing more when it is refused for its length.
  if (definition.minItems !== undefined && value.length < definition.minItems)
    return `must have at least ${definition.minItems} options chosen`;
  if (definition.maxItems !== undefined && value.length > definition.maxItems)
    return `must have at most ${definition.maxItems} options chosen`;
  const items = definition.items;
  // A set for this check only: each chosen item costs one lookup, not one pass over the options.
  const options = new Set('enum' in items ? items.enum : items.anyOf.map((option) => option.const));
  for (const item of value) {
    if (typeof item !== 'string' || !options.has(item))
      return `must hold only its ${options.size} options`;
  }
  return undefined;
}

/** Length as JSON Schema counts it: in Unicode code points, a surrogate pair being one. */
function codePoints(text: string): number {
  let count = text.length;
  for (let index = 0; index < text.length - 1; index++) {
    const high = text.charCodeAt(index);
    if (high < 0xd800 || high > 0xdbff) continue;
    const low = text.charCodeAt(index + 1);
    if (low >= 0xdc00 && low <= 0xdfff) {
      count -= 1;
      index += 1;
    }
  }
  return count;
}

function titledOptions(value: unknown): TitledOption[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const options: TitledOption[] = [];
  for (const option of value) {
    if (!isRecord(option) || !isString(option.const) || !isString(option.title)) return undefined;
    options.push({ const: option.const, title: option.title });
  }
  return options;
}

/** A copy of `value` when it is a list of strings only. */
function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every(isString) ? [...value] : undefined;
}

/** `{ [key]: value }` when `source[key]` passes `accepts`, else nothing. */
function pick<K extends string, T>(
  source: Record<string, unknown>,
  key: K,
  accepts: (value: unknown) => value is T,
): { [P in K]?: T } {
  const value = source[key];
  return (accepts(value) ? { [key]: value } : {}) as { [P in K]?: T };
}

function quoted(field: string): string {
  return JSON.stringify(field);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isBoolean(value: unknown): value is boolean {
  return typeof value === 'boolean';
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
