/**
 * The tool editor: title, description, code (CodeMirror), inputs (parameter
 * declarations or a JSON Schema), output schema, behaviour hints, the secret
 * names the tool uses, limits. Save sends the whole definition; a syntax
 * error comes back with its line and is marked there, a schema problem with
 * its path at its field, and nothing is saved. Below: the test-run panel and
 * the version history.
 */
import { api, ApiError, segment } from './api.js';
import { createCodeEditor } from './code-editor.js';
import { announce, h, replaceChildren } from './dom.js';
import { createHintsFields } from './hints-fields.js';
import { createSchemaFields, SchemaTextError, type FieldProblem } from './schema-fields.js';
import { renderTestRun } from './test-run.js';
import { fetchTool } from './tools-tab.js';
import type { ToolDefinitionInput, ToolRecord } from '../../store/index.js';
import type { ServerInfo } from './types.js';
import { renderVersions } from './versions-panel.js';

const STARTER_CODE = `// params: the declared parameters; env: the secrets listed below; sdk: http, db, lodash.
console.log('called with', params);
return { ok: true };
`;

/** Renders the editor of `name` (a new tool when it does not exist yet). */
export async function renderToolEditor(
  panel: HTMLElement,
  server: ServerInfo,
  name: string,
): Promise<void> {
  const tool = await fetchTool(server.subdomain, name);
  const path = `/api/servers/${segment(server.subdomain)}/tools/${segment(name)}`;

  const description = h('textarea', { id: 'tool-description', rows: 2 });
  description.value = tool?.description ?? '';
  const secrets = h('input', {
    id: 'tool-secrets',
    value: (tool?.secrets ?? []).join(', '),
    autocomplete: 'off',
    'aria-describedby': 'tool-secrets-help',
  });
  const timeout = h('input', {
    id: 'tool-timeout',
    type: 'number',
    min: 1,
    value: tool?.limits.timeoutMs ?? '',
  });
  const memory = h('input', {
    id: 'tool-memory',
    type: 'number',
    min: 1,
    value: tool?.limits.memoryMb ?? '',
  });
  const strict = h('input', { id: 'tool-strict', type: 'checkbox' });
  strict.checked = tool?.strict ?? false;
  const schemas = createSchemaFields(tool);
  const hints = createHintsFields(tool);
  const secretNames = () => secrets.value.split(/[\s,]+/).filter((s) => s !== '');

  const editorHost = h('div', { class: 'code-editor' });
  const editor = createCodeEditor(editorHost, {
    doc: tool?.code ?? STARTER_CODE,
    label: 'Code',
    describedBy: 'code-help',
    scope: { parameters: () => schemas.parameterNames(), secrets: secretNames },
  });

  const errorBox = h('div', { role: 'alert', class: 'error', id: 'tool-error' });
  const status = h('p', { role: 'status', class: 'ok', id: 'tool-status' });
  const testRun = h('section', { class: 'card' });
  const versions = h('section', { class: 'card' });
  const heading = h(
    'h2',
    { id: 'editor-heading' },
    tool ? `Tool ${name} (version ${tool.version})` : `New tool ${name}`,
  );
  const reload = () => void renderToolEditor(panel, server, name);

  const form = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'editor-heading',
      onsubmit: async (event) => {
        event.preventDefault();
        errorBox.replaceChildren();
        status.textContent = '';
        editor.markError(null);
        schemas.clearProblems();
        let declared: ReturnType<typeof schemas.value>;
        try {
          declared = schemas.value();
        } catch (error) {
          if (!(error instanceof SchemaTextError)) throw error;
          replaceChildren(errorBox, h('p', {}, h('strong', {}, 'Not saved: '), error.message));
          return;
        }
        const definition: ToolDefinitionInput = {
          ...hints.value(),
          description: description.value,
          code: editor.value(),
          ...declared,
          secrets: secretNames(),
          limits: {
            ...(timeout.value ? { timeoutMs: Number(timeout.value) } : {}),
            ...(memory.value ? { memoryMb: Number(memory.value) } : {}),
          },
          strict: strict.checked,
        };
        try {
          const saved = await api<ToolRecord>('PUT', path, definition);
          status.textContent = `Saved as version ${saved.version}.`;
          heading.textContent = `Tool ${name} (version ${saved.version})`;
          announce(status.textContent);
          renderTestRun(testRun, server.subdomain, saved);
          versions.hidden = false;
          await renderVersions(versions, server.subdomain, name, reload);
        } catch (error) {
          const details =
            error instanceof ApiError
              ? (error.details as { line?: number; column?: number; message?: string })
              : undefined;
          if (
            error instanceof ApiError &&
            error.code === 'ERR_TOOL_SYNTAX' &&
            typeof details?.line === 'number'
          ) {
            editor.markError(details.line, error.message);
            replaceChildren(
              errorBox,
              h(
                'p',
                {},
                h('strong', {}, `Syntax error at line ${details.line}`),
                `, column ${details.column ?? '?'}: `,
                details.message ?? error.message,
                ' Nothing was saved.',
              ),
            );
          } else {
            const problems = validationProblems(error);
            // Problems of a schema are shown at its field too; all are listed here.
            schemas.showProblems(problems);
            replaceChildren(
              errorBox,
              h('p', {}, h('strong', {}, 'Not saved: '), (error as Error).message),
              problems.length > 1
                ? h(
                    'ul',
                    {},
                    problems.map((problem) =>
                      h('li', {}, problem.path ? `${problem.path}: ` : '', problem.message),
                    ),
                  )
                : null,
            );
          }
        }
      },
    },
    heading,
    hints.title,
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'tool-description' }, 'Description'),
      description,
    ),
    h(
      'div',
      { class: 'field' },
      h('span', { class: 'label', id: 'code-label' }, 'Code'),
      editorHost,
      h(
        'span',
        { id: 'code-help', class: 'hint' },
        'The body of an async function. Ctrl+Space completes params, env and sdk. Tab leaves the editor.',
      ),
    ),
    schemas.elements,
    hints.hints,
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'tool-secrets' }, 'Secrets used'),
      secrets,
      h(
        'span',
        { id: 'tool-secrets-help', class: 'hint' },
        'Secret names, separated by commas; the tool sees them as env.NAME. Set values on the Secrets tab.',
      ),
    ),
    h(
      'div',
      { class: 'fields' },
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'tool-timeout' }, 'Timeout (ms, optional)'),
        timeout,
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'tool-memory' }, 'Memory (MiB, optional)'),
        memory,
      ),
      h(
        'div',
        { class: 'field checkbox' },
        strict,
        h('label', { for: 'tool-strict' }, 'Single-use containers'),
      ),
    ),
    errorBox,
    status,
    h('button', { type: 'submit', class: 'primary' }, 'Save tool'),
  );
  replaceChildren(
    panel,
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: `#/servers/${segment(server.subdomain)}/tools` }, 'All tools'),
    ),
    form,
    testRun,
    versions,
  );
  if (tool) {
    renderTestRun(testRun, server.subdomain, tool);
    await renderVersions(versions, server.subdomain, name, reload);
  } else {
    replaceChildren(
      testRun,
      h('h2', {}, 'Test run'),
      h('p', { class: 'hint' }, 'Save the tool to run it.'),
    );
    versions.hidden = true;
  }
}

/** The per-field problems of an ERR_VALIDATION answer (none for other errors). */
function validationProblems(error: unknown): FieldProblem[] {
  if (!(error instanceof ApiError) || error.code !== 'ERR_VALIDATION') return [];
  if (!Array.isArray(error.details)) return [];
  return error.details.filter(
    (detail): detail is FieldProblem =>
      typeof detail?.path === 'string' && typeof detail?.message === 'string',
  );
}
