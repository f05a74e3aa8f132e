/**
 * The prompt editor: title, description, arguments (each with its
 * completions), and the messages — template messages with `{{argument}}`
 * placeholders, or code that returns them (CodeMirror, completing the
 * arguments, the listed secrets and the sdk) — then the secrets and limits
 * its code runs with. Below: the render panel and the version history.
 */
import { createCodeEditor } from './code-editor.js';
import { h } from './dom.js';
import { fetchEntry } from './entry-api.js';
import { renderEntryEditor } from './entry-editor-frame.js';
import { problemMessage } from './field-problems.js';
import { createArgumentsEditor } from './prompt-arguments-editor.js';
import { createMessagesEditor } from './prompt-messages-editor.js';
import { renderPromptRender } from './prompt-render.js';
import { createRunSettingsFields } from './run-settings-fields.js';
import type { PromptDefinitionInput } from '../../store/index.js';
import type { ServerInfo } from './types.js';

const STARTER_CODE = `// params: the arguments (strings); env: the secrets listed below; sdk as for tools.
// Return messages [{role, content}], a string (one user message) or sdk.content blocks.
return [{ role: 'user', content: sdk.content.text('Hello') }];
`;

/** Renders the editor of `name` (a new prompt when it does not exist yet). */
export async function renderPromptEditor(
  panel: HTMLElement,
  server: ServerInfo,
  name: string,
): Promise<void> {
  const prompt = await fetchEntry(server.subdomain, 'prompt', name);

  const title = h('input', {
    id: 'prompt-title',
    value: prompt?.title ?? '',
    autocomplete: 'off',
    maxlength: 256,
    'aria-describedby': 'prompt-title-error',
  });
  const titleMessage = problemMessage('prompt-title-error');
  const description = h('textarea', {
    id: 'prompt-description',
    rows: 2,
    'aria-describedby': 'prompt-description-error',
  });
  description.value = prompt?.description ?? '';
  const descriptionMessage = problemMessage('prompt-description-error');
  const settings = createRunSettingsFields('prompt', prompt);
  const argumentsEditor = createArgumentsEditor(prompt?.arguments ?? [], settings.secretNames);
  const messages = createMessagesEditor(prompt?.messages ?? []);

  const editorHost = h('div', { class: 'code-editor' });
  const editor = createCodeEditor(editorHost, {
    doc: prompt?.code ?? STARTER_CODE,
    label: 'Prompt code',
    describedBy: 'prompt-code-help',
    scope: { parameters: argumentsEditor.names, secrets: settings.secretNames },
  });
  const codeMessage = problemMessage('prompt-code-error');
  const codeField = h(
    'div',
    { class: 'field' },
    h('span', { class: 'label' }, 'Prompt code'),
    editorHost,
    h(
      'span',
      { id: 'prompt-code-help', class: 'hint' },
      'The body of an async function. Ctrl+Space completes params, env and sdk. Tab leaves the editor.',
    ),
    codeMessage,
  );

  const byTemplate = h('input', { type: 'radio', name: 'prompt-source', id: 'prompt-by-template' });
  const byCode = h('input', { type: 'radio', name: 'prompt-source', id: 'prompt-by-code' });
  byTemplate.checked = prompt?.code === undefined;
  byCode.checked = !byTemplate.checked;
  const showSource = () => {
    messages.element.hidden = byCode.checked;
    codeField.hidden = !byCode.checked;
  };
  byTemplate.addEventListener('change', showSource);
  byCode.addEventListener('change', showSource);
  showSource();

  await renderEntryEditor(panel, {
    server,
    kind: 'prompt',
    name,
    record: prompt,
    tryTitle: 'Render',
    reload: () => void renderPromptEditor(panel, server, name),
    fields: [
      h(
        'div',
        { class: 'field' },
        h('label', { for: title.id }, 'Title (optional)'),
        title,
        titleMessage,
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: description.id }, 'Description'),
        description,
        descriptionMessage,
      ),
      argumentsEditor.element,
      h(
        'div',
        { class: 'choices', role: 'radiogroup', 'aria-label': 'Messages from' },
        h('span', { class: 'label' }, 'Messages from'),
        h('span', { class: 'choice' }, byTemplate, h('label', { for: byTemplate.id }, 'Template')),
        h('span', { class: 'choice' }, byCode, h('label', { for: byCode.id }, 'Code')),
      ),
      messages.element,
      codeField,
      settings.element,
    ],
    collect: (): PromptDefinitionInput => ({
      ...(title.value.trim() ? { title: title.value.trim() } : {}),
      description: description.value,
      arguments: argumentsEditor.value(),
      ...(byCode.checked ? { code: editor.value() } : { messages: messages.value() }),
      ...settings.value(),
    }),
    slots: () => [
      { path: 'title', control: title, message: titleMessage },
      { path: 'description', control: description, message: descriptionMessage },
      { path: 'code', message: codeMessage, editor },
      ...argumentsEditor.slots(),
      ...messages.slots(),
      ...settings.slots,
    ],
    renderTry: (section, saved) => renderPromptRender(section, server.subdomain, saved),
  });
}
