/**
 * The tool editor: title, description, code (CodeMirror), inputs (parameter
 * declarations or a JSON Schema), output schema, behaviour hints, the secret
 * names the tool uses, limits. Save sends the whole definition; a syntax
 * error comes back with its line and is marked there, a schema problem with
 * its path at its field, and nothing is saved. Syntax errors are marked while
 * typing too, and a listed secret without a value is said under its field.
 * Below: the test-run panel (a failed run's position marked in the code) and
 * the version history.
 */
import { createCodeEditor, type CodeEditor } from './code-editor.js';
import { h, replaceChildren } from './dom.js';
import { renderEditorPage } from './editor-page.js';
import { listProblems, sentence, syntaxProblem, validationProblems } from './field-problems.js';
import { createHintsFields } from './hints-fields.js';
import { fetchSecretNames, missingSecrets, missingSecretsNote } from './missing-secrets.js';
import { createSchemaFields, type SchemaFields } from './schema-fields.js';
import { renderTestRun } from './test-run.js';
import { entryPath, entryRoute, fetchEntry } from './entry-api.js';
import type { WithEffectiveLimits } from '../../admin/index.js';
import type { ToolDefinitionInput, ToolRecord } from '../../store/index.js';
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
  // GET answers a saved tool with the limits it runs with now (admin/limit-ceilings.ts).
  const [tool, secretNamesSet] = await Promise.all([
    fetchEntry(server.subdomain, 'tool', name) as Promise<
      WithEffectiveLimits<ToolRecord> | undefined
    >,
    fetchSecretNames(server.subdomain),
  ]);

  const description = h('textarea', { id: 'tool-description', rows: 2 });
  description.value = tool?.description ?? '';
  const secrets = h('input', {
    id: 'tool-secrets',
    value: (tool?.secrets ?? []).join(', '),
    autocomplete: 'off',
    'aria-describedby': 'tool-secrets-help tool-secrets-missing',
  });
  const timeout = h('input', {
    id: 'tool-timeout',
    type: 'number',
    min: 1,
    value: tool?.limits.timeoutMs ?? '',
    'aria-describedby': 'tool-limits-help',
  });
  const memory = h('input', {
    id: 'tool-memory',
    type: 'number',
    min: 1,
    value: tool?.limits.memoryMb ?? '',
    'aria-describedby': 'tool-limits-help',
  });
  const strict = h('input', { id: 'tool-strict', type: 'checkbox' });
  strict.checked = tool?.strict ?? false;
  const schemas = createSchemaFields(tool);
  const hints = createHintsFields(tool);
  const secretNames = () => secrets.value.split(/[\s,]+/).filter((s) => s !== '');
  // Said as the names are typed: a listed secret the server has no value for.
  const missing = h('p', { id: 'tool-secrets-missing', class: 'warnings', role: 'status' });
  const showMissing = () =>
    replaceChildren(
      missing,
      missingSecretsNote(server.subdomain, missingSecrets(secretNames(), secretNamesSet)),
    );
  secrets.addEventListener('input', showMissing);
  showMissing();

  const editorHost = h('div', { class: 'code-editor' });
  const syntaxStatus = h('p', { id: 'code-syntax', class: 'error', role: 'status' });
  const editor = createCodeEditor(editorHost, {
    doc: tool?.code ?? STARTER_CODE,
    label: 'Code',
    describedBy: 'code-help code-syntax',
    scope: { parameters: () => schemas.parameterNames(), secrets: secretNames },
    syntaxStatus,
  });

  await renderEditorPage(panel, {
    kind: 'tool',
    name,
    subdomain: server.subdomain,
    path: entryPath(server.subdomain, 'tool', name),
    listRoute: entryRoute(server.subdomain, 'tool'),
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
        syntaxStatus,
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
        missing,
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
      h('span', { id: 'tool-limits-help', class: 'hint' }, limitsHint(server, tool)),
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
      // A run's error with a position (syntax, or a throw) is marked in the code too.
      render: (section, saved) =>
        renderTestRun(section, server.subdomain, saved, {
          onError: (error) => {
            if (error.line !== undefined) editor.markError(error.line, error.message, error.column);
          },
        }),
    },
    reload: () => void renderToolEditor(panel, server, name),
  });
}

/**
 * What the limit fields mean on this server: its limits (an admin's) are the
 * most a tool may set, and what a saved tool runs with now.
 */
function limitsHint(server: ServerInfo, tool: WithEffectiveLimits<ToolRecord> | undefined): string {
  const ceilings = [
    server.limits.timeoutMs === undefined ? undefined : `${server.limits.timeoutMs} ms`,
    server.limits.memoryMb === undefined ? undefined : `${server.limits.memoryMb} MiB`,
  ].filter((part) => part !== undefined);
  const sentences = [
    ceilings.length === 0
      ? 'Empty: the service defaults. A tool may only lower its server’s limits.'
      : `Empty: the server’s limits. At most ${ceilings.join(' and ')}, as an admin set them.`,
  ];
  if (tool?.effectiveLimits) {
    const { timeoutMs, memoryMb } = tool.effectiveLimits;
    sentences.push(
      tool.limitsClamped.length === 0
        ? `Runs with ${timeoutMs} ms and ${memoryMb} MiB.`
        : `Runs with ${timeoutMs} ms and ${memoryMb} MiB: its ${tool.limitsClamped.join(' and ')} were saved above a ceiling lowered since.`,
    );
  }
  return sentences.join(' ');
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
    editor.markError(syntax.line, (error as Error).message, syntax.column);
    replaceChildren(
      errorBox,
      h(
        'p',
        {},
        h('strong', {}, `Syntax error at line ${syntax.line}`),
        `, column ${syntax.column ?? '?'}: `,
        sentence(syntax.message),
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
