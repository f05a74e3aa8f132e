/**
 * The test-run panel: a form generated from the tool's declarations — a
 * field per parameter, or, for a tool with a JSON Schema `inputSchema`, the
 * arguments as JSON (prefilled with an example of the schema) — Run, then the
 * outcome (pretty JSON result or the error, a schema mismatch with its path),
 * the captured console lines and the duration. Runs go through the same path
 * as an MCP `tools/call` (POST …/invoke).
 */
import { segment } from './api.js';
import { h, prettyJson } from './dom.js';
import { exampleOf } from './schema-example.js';
import { renderTryForm, showAnswer } from './try-panel.js';
import type { ToolParameter, ToolRecord } from '../../store/index.js';
import type { OutcomeError } from '../../sandbox/index.js';
import type { TestRunAnswer } from './types.js';

/** What the panel reads of a saved tool. */
export type RunnableTool = Pick<ToolRecord, 'name' | 'parameters' | 'inputSchema'>;

/** What the editor around the panel does with an answer. */
export interface TestRunHooks {
  /** Told a failed run's error (with its line and column in the code, when it has them). */
  onError?(error: OutcomeError): void;
}

/** Renders the panel for the saved declarations of `tool` into `section`. */
export function renderTestRun(
  section: HTMLElement,
  subdomain: string,
  tool: RunnableTool,
  hooks: TestRunHooks = {},
): void {
  const fields = tool.inputSchema
    ? schemaArguments(tool.inputSchema)
    : declaredArguments(tool.parameters);
  renderTryForm<TestRunAnswer>(section, {
    title: 'Test run',
    headingId: 'test-run-heading',
    button: 'Run',
    busy: 'Running…',
    fields: fields.elements,
    path: `/api/servers/${segment(subdomain)}/tools/${segment(tool.name)}/invoke`,
    body: () => ({ params: fields.collect() }),
    show: (output, result) => {
      if (!result.ok) hooks.onError?.(result.error);
      showAnswer(output, result, {
        outcomeId: 'run-outcome',
        headline: `${result.ok ? 'Succeeded' : 'Failed'} in ${result.durationMs} ms (version ${result.version})`,
        success: ({ content, result: value }) => [
          h('h3', { id: 'run-result-heading' }, content ? 'Content blocks' : 'Result'),
          h(
            'pre',
            { tabindex: 0, 'aria-labelledby': 'run-result-heading', class: 'result' },
            prettyJson(content ?? value),
          ),
        ],
        logs: result.logs,
        logsHeadingId: 'run-logs-heading',
      });
    },
    announcement: (result) =>
      result.ok ? `Run finished in ${result.durationMs} ms.` : 'Run failed.',
  });
}

/** The arguments part of the form: its controls and how to read them (throws with a message to show). */
interface ArgumentFields {
  elements: (HTMLElement | null)[];
  collect(): Record<string, unknown>;
}

/** One JSON textarea for a tool with an inputSchema; the schema itself a click away. */
function schemaArguments(schema: Record<string, unknown>): ArgumentFields {
  const area = h('textarea', {
    id: 'run-arguments',
    rows: 8,
    spellcheck: 'false',
    class: 'json',
    'aria-describedby': 'run-arguments-help',
  });
  area.value = JSON.stringify(exampleOf(schema), null, 2);
  return {
    elements: [
      h(
        'div',
        { class: 'field' },
        h('label', { for: area.id }, 'Arguments (JSON)'),
        area,
        h(
          'span',
          { id: 'run-arguments-help', class: 'hint' },
          'An object matching the input schema; prefilled with its required properties. Arguments that do not match are refused with the path of the problem.',
        ),
      ),
      h(
        'details',
        {},
        h('summary', {}, 'Input schema'),
        h('pre', { tabindex: 0 }, prettyJson(schema)),
      ),
    ],
    collect: () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(area.value);
      } catch (error) {
        area.setAttribute('aria-invalid', 'true');
        throw new Error(`The arguments are not valid JSON: ${(error as Error).message}`);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        area.setAttribute('aria-invalid', 'true');
        throw new Error('The arguments must be a JSON object.');
      }
      area.removeAttribute('aria-invalid');
      return parsed as Record<string, unknown>;
    },
  };
}

/** A control per declared parameter. */
function declaredArguments(parameters: ToolParameter[]): ArgumentFields {
  const inputs = parameters.map((parameter) => ({ parameter, control: controlFor(parameter) }));
  return {
    elements: [
      inputs.length === 0 ? h('p', { class: 'hint' }, 'This tool declares no parameters.') : null,
      ...inputs.map(({ parameter, control }) =>
        h(
          'div',
          { class: parameter.type === 'boolean' ? 'field checkbox' : 'field' },
          parameter.type === 'boolean' ? control : null,
          h('label', { for: control.id }, parameter.name, parameter.required ? '' : ' (optional)'),
          parameter.type === 'boolean' ? null : control,
          parameter.description ? h('span', { class: 'hint' }, parameter.description) : null,
        ),
      ),
    ],
    collect: () => collect(inputs),
  };
}

function controlFor(parameter: ToolParameter): HTMLInputElement | HTMLTextAreaElement {
  const id = `run-${parameter.name}`;
  switch (parameter.type) {
    case 'boolean':
      return h('input', { id, type: 'checkbox' });
    case 'number':
    case 'integer':
      return h('input', {
        id,
        type: 'number',
        step: parameter.type === 'integer' ? '1' : 'any',
        required: parameter.required,
      });
    case 'object':
    case 'array':
      return h('textarea', {
        id,
        rows: 3,
        placeholder: parameter.type === 'object' ? '{ }' : '[ ]',
        required: parameter.required,
      });
    default:
      return h('input', { id, required: parameter.required, autocomplete: 'off' });
  }
}

/** The arguments as typed; optional fields left empty are not sent. */
function collect(
  inputs: { parameter: ToolParameter; control: HTMLInputElement | HTMLTextAreaElement }[],
): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const { parameter, control } of inputs) {
    if (parameter.type === 'boolean') {
      params[parameter.name] = (control as HTMLInputElement).checked;
      continue;
    }
    const raw = control.value;
    if (raw === '') continue;
    if (parameter.type === 'number' || parameter.type === 'integer')
      params[parameter.name] = Number(raw);
    else if (parameter.type === 'object' || parameter.type === 'array') {
      try {
        params[parameter.name] = JSON.parse(raw);
      } catch {
        throw new Error(`${parameter.name} is not valid JSON.`);
      }
    } else params[parameter.name] = raw;
  }
  return params;
}
