/**
 * The tool editor: title, description, code (CodeMirror), inputs (parameter
 * declarations or a JSON Schema), output schema, behaviour hints, the secret
 * names the tool uses, limits. Save sends the whole definition; a syntax
 * error comes back with its line and is marked there, a schema problem with
 * its path at its field, and nothing is saved. Below: the test-run panel and
 * the version history.
 */
import { segment } from './api.js';
import { createCodeEditor, type CodeEditor } from './code-editor.js';
import { h, replaceChildren } from './dom.js';
import { renderEditorPage } from './editor-page.js';
import { listProblems, syntaxProblem, validationProblems } from './field-problems.js';
import { createHintsFields } from './hints-fields.js';
import { createSchemaFields, type SchemaFields } from './schema-fields.js';
import { renderTestRun } from './test-run.js';
import { fetchTool } from './tools-tab.js';
import type { ToolDefinitionInput } from '../../store/index.js';
import type { ServerInfo } from './types.js';

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

  await renderEditorPage(panel, {
    kind: 'tool',
    name,
    subdomain: server.subdomain,
    path: `/api/servers/${segment(server.subdomain)}/tools/${segment(name)}`,
    listRoute: `#/servers/${segment(server.subdomain)}/tools`,
    record: tool,
    fields: [
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
    ],
    collect: (): ToolDefinitionInput => {
      editor.markError(null);
      schemas.clearProblems();
      // Throws SchemaTextError for schema text that is not a JSON object (marked at its field).
      const declared = schemas.value();
      return {
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
    },
    showError: (errorBox, error) => showToolSaveError(errorBox, error, editor, schemas),
    // Unlike prompts and resources, the tools tab has never offered delete.
    canDelete: false,
    tryPanel: {
      title: 'Test run',
      unsavedHint: 'Save the tool to run it.',
      render: (section, saved) => renderTestRun(section, server.subdomain, saved),
    },
    reload: () => void renderToolEditor(panel, server, name),
  });
}

/**
 * A refused save: a syntax error at its line in the code, schema problems
 * at their field, and every problem listed in `errorBox`. Text a schema
 * field refused itself (SchemaTextError) has no problems of the server's:
 * it shows as "Not saved:" and its message.
 */
function showToolSaveError(
  errorBox: HTMLElement,
  error: unknown,
  editor: CodeEditor,
  schemas: SchemaFields,
): void {
  const syntax = syntaxProblem(error);
  if (syntax) {
    editor.markError(syntax.line, (error as Error).message);
    replaceChildren(
      errorBox,
      h(
        'p',
        {},
        h('strong', {}, `Syntax error at line ${syntax.line}`),
        `, column ${syntax.column ?? '?'}: `,
        syntax.message,
        ' Nothing was saved.',
      ),
    );
    return;
  }
  const problems = validationProblems(error);
  // Problems of a schema are shown at its field too; all are listed in the box.
  schemas.showProblems(problems);
  listProblems(errorBox, error, problems);
}
