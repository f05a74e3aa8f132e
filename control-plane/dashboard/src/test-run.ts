/**
 * The test-run panel: a form generated from the tool's parameter
 * declarations, Run, then the outcome (pretty JSON result or the error), the
 * captured console lines and the duration. Runs go through the same path as
 * an MCP `tools/call` (POST …/invoke).
 */
import { api, segment } from './api.js';
import { announce, h, prettyJson, replaceChildren } from './dom.js';
import type { ToolParameter } from '../../store/index.js';
import type { TestRunAnswer } from './types.js';

/** Renders the panel for the saved declarations of `tool` into `section`. */
export function renderTestRun(
  section: HTMLElement,
  subdomain: string,
  tool: string,
  parameters: ToolParameter[],
): void {
  const inputs = parameters.map((parameter) => ({ parameter, control: controlFor(parameter) }));
  const output = h('div', { class: 'run-output', 'aria-live': 'polite' });
  const run = h('button', { type: 'submit', class: 'primary' }, 'Run');
  const form = h(
    'form',
    {
      onsubmit: async (event) => {
        event.preventDefault();
        let params: Record<string, unknown>;
        try {
          params = collect(inputs);
        } catch (error) {
          replaceChildren(
            output,
            h('p', { role: 'alert', class: 'error' }, (error as Error).message),
          );
          return;
        }
        run.disabled = true;
        replaceChildren(output, h('p', {}, 'Running…'));
        try {
          const result = await api<TestRunAnswer>(
            'POST',
            `/api/servers/${segment(subdomain)}/tools/${segment(tool)}/invoke`,
            { params },
          );
          showResult(output, result);
          announce(result.ok ? `Run finished in ${result.durationMs} ms.` : 'Run failed.');
        } catch (error) {
          replaceChildren(
            output,
            h('p', { role: 'alert', class: 'error' }, (error as Error).message),
          );
        } finally {
          run.disabled = false;
        }
      },
    },
    inputs.length === 0 ? h('p', { class: 'hint' }, 'This tool declares no parameters.') : null,
    inputs.map(({ parameter, control }) =>
      h(
        'div',
        { class: parameter.type === 'boolean' ? 'field checkbox' : 'field' },
        parameter.type === 'boolean' ? control : null,
        h('label', { for: control.id }, parameter.name, parameter.required ? '' : ' (optional)'),
        parameter.type === 'boolean' ? null : control,
        parameter.description ? h('span', { class: 'hint' }, parameter.description) : null,
      ),
    ),
    run,
  );
  replaceChildren(section, h('h2', { id: 'test-run-heading' }, 'Test run'), form, output);
  section.setAttribute('aria-labelledby', 'test-run-heading');
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

function showResult(output: HTMLElement, result: TestRunAnswer): void {
  replaceChildren(
    output,
    h(
      'p',
      { class: result.ok ? 'ok' : 'error', id: 'run-outcome' },
      result.ok ? 'Succeeded' : 'Failed',
      ` in ${result.durationMs} ms (version ${result.version})`,
    ),
    result.ok
      ? [
          h('h3', { id: 'run-result-heading' }, 'Result'),
          h(
            'pre',
            { tabindex: 0, 'aria-labelledby': 'run-result-heading', class: 'result' },
            prettyJson(result.result),
          ),
        ]
      : h(
          'p',
          { role: 'alert', class: 'error' },
          h('strong', {}, result.error.code),
          ': ',
          result.error.message,
        ),
    h('h3', { id: 'run-logs-heading' }, 'Console'),
    result.logs.length === 0
      ? h('p', { class: 'hint' }, 'Nothing was logged.')
      : h(
          'ol',
          { class: 'logs', 'aria-labelledby': 'run-logs-heading' },
          result.logs.map((line) =>
            h(
              'li',
              { class: `log-${line.level}` },
              h('span', { class: 'level' }, line.level),
              ' ',
              line.text,
            ),
          ),
        ),
  );
}
