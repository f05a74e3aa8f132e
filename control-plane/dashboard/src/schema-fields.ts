/**
 * How a tool declares its inputs and output in the editor: a parameter list
 * or a JSON Schema 2020-12 `inputSchema` (one or the other, chosen with two
 * radio buttons), and an optional `outputSchema`. Schemas are edited as JSON
 * text; text that does not parse is refused here, with the position, and the
 * server's problems (each with the path in the schema) are shown at the field
 * they belong to.
 */
import { h, replaceChildren } from './dom.js';
import { createParametersEditor } from './parameters-editor.js';
import type { ToolDefinitionInput, ToolParameter, ToolRecord } from '../../store/index.js';

type JsonObject = Record<string, unknown>;

/** A schema field whose text is not a JSON object; nothing is sent. */
export class SchemaTextError extends Error {
  constructor(
    readonly field: 'inputSchema' | 'outputSchema',
    message: string,
  ) {
    super(message);
  }
}

/** One problem as the admin API reports it (`details` of ERR_VALIDATION). */
export interface FieldProblem {
  path: string;
  message: string;
}

export interface SchemaFields {
  /** The inputs fieldset (mode, parameters or schema) and the output fieldset. */
  readonly elements: HTMLElement[];
  /** The definition's input and output part; throws SchemaTextError for text that is not a JSON object. */
  value(): Pick<ToolDefinitionInput, 'parameters' | 'inputSchema' | 'outputSchema'>;
  /** Names `params` has, for completion: the parameters, or the schema's top-level properties. */
  parameterNames(): string[];
  /** Shows the problems that belong to a schema at its field; returns how many it showed. */
  showProblems(problems: readonly FieldProblem[]): number;
  clearProblems(): void;
}

/** Builds the fields for `tool` (undefined: a new tool, with a parameter list). */
export function createSchemaFields(tool: ToolRecord | undefined): SchemaFields {
  const parameters = createParametersEditor(tool?.parameters ?? [], () => undefined);
  const input = schemaArea(
    'inputSchema',
    'tool-input-schema',
    'Input schema (JSON Schema 2020-12)',
  );
  const output = schemaArea('outputSchema', 'tool-output-schema', 'Output schema (optional)');
  if (tool?.inputSchema) input.area.value = JSON.stringify(tool.inputSchema, null, 2);
  if (tool?.outputSchema) output.area.value = JSON.stringify(tool.outputSchema, null, 2);

  const byList = h('input', { type: 'radio', name: 'input-mode', id: 'input-mode-list' });
  const bySchema = h('input', { type: 'radio', name: 'input-mode', id: 'input-mode-schema' });
  const schemaMode = () => bySchema.checked;
  const showMode = () => {
    parameters.element.hidden = schemaMode();
    input.field.hidden = !schemaMode();
  };
  byList.checked = tool?.inputSchema === undefined;
  bySchema.checked = !byList.checked;
  byList.addEventListener('change', showMode);
  bySchema.addEventListener('change', () => {
    // Start the schema from the declared parameters, so switching loses nothing.
    if (input.area.value.trim() === '') {
      input.area.value = JSON.stringify(schemaOfParameters(parameters.value()), null, 2);
    }
    showMode();
  });
  showMode();

  const inputs = h(
    'fieldset',
    { class: 'card' },
    h('legend', {}, 'Inputs'),
    h(
      'div',
      { class: 'choices', role: 'radiogroup', 'aria-label': 'Inputs declared as' },
      h('span', { class: 'choice' }, byList, h('label', { for: byList.id }, 'Parameter list')),
      h(
        'span',
        { class: 'choice' },
        bySchema,
        h('label', { for: bySchema.id }, 'JSON Schema 2020-12'),
      ),
    ),
    parameters.element,
    input.field,
  );
  const outputs = h('fieldset', { class: 'card' }, h('legend', {}, 'Output'), output.field);
  const areas = [input, output];

  return {
    elements: [inputs, outputs],
    value: () => ({
      parameters: schemaMode() ? [] : parameters.value(),
      ...(schemaMode() ? { inputSchema: input.parse() } : {}),
      ...(output.area.value.trim() === '' ? {} : { outputSchema: output.parse() }),
    }),
    parameterNames: () => {
      if (!schemaMode()) return parameters.value().map((parameter) => parameter.name);
      try {
        const properties = input.parse().properties;
        return properties && typeof properties === 'object' ? Object.keys(properties) : [];
      } catch {
        return [];
      }
    },
    showProblems: (problems) => {
      let shown = 0;
      for (const area of areas) {
        const own = problems.filter(
          (problem) => problem.path === area.role || problem.path.startsWith(`${area.role}.`),
        );
        if (own.length > 0) area.show(own);
        shown += own.length;
      }
      return shown;
    },
    clearProblems: () => areas.forEach((area) => area.clear()),
  };
}

/** A labelled JSON textarea with its own error line. */
function schemaArea(role: 'inputSchema' | 'outputSchema', id: string, label: string) {
  const errorId = `${id}-error`;
  const area = h('textarea', {
    id,
    rows: 10,
    spellcheck: 'false',
    class: 'json',
    'aria-describedby': `${id}-help ${errorId}`,
  });
  const error = h('div', { id: errorId, class: 'error field-error' });
  const help =
    role === 'inputSchema'
      ? 'An object schema ("type": "object"); $defs, $ref, enums and arrays of objects work. Published to clients as written; calls that do not match are refused before the tool runs.'
      : 'An object schema; the tool must return an object matching it, which clients receive as structuredContent. Leave empty for none.';
  const field = h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    area,
    h('span', { id: `${id}-help`, class: 'hint' }, help),
    error,
  );
  const show = (problems: readonly FieldProblem[]) => {
    area.setAttribute('aria-invalid', 'true');
    replaceChildren(
      error,
      h(
        'ul',
        {},
        problems.map((problem) => h('li', {}, h('code', {}, problem.path), ': ', problem.message)),
      ),
    );
  };
  return {
    role,
    area,
    field,
    show,
    clear: () => {
      area.removeAttribute('aria-invalid');
      error.replaceChildren();
    },
    parse: (): JsonObject => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(area.value);
      } catch (reason) {
        const message = `${label} is not valid JSON: ${(reason as Error).message}`;
        show([{ path: role, message }]);
        throw new SchemaTextError(role, message);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        const message = `${label} must be a JSON object.`;
        show([{ path: role, message }]);
        throw new SchemaTextError(role, message);
      }
      return parsed as JsonObject;
    },
  };
}

/** The schema a parameter list stands for (as the control plane generates it). */
function schemaOfParameters(parameters: ToolParameter[]): JsonObject {
  const properties: JsonObject = {};
  for (const parameter of parameters) {
    properties[parameter.name] = {
      type: parameter.type,
      ...(parameter.description ? { description: parameter.description } : {}),
    };
  }
  const required = parameters.filter((p) => p.required).map((p) => p.name);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}
