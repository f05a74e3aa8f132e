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
import { createEntryTextFields } from './entry-text-fields.js';
import { problemMessage } from './field-problems.js';
import { createArgumentsEditor } from './prompt-arguments-editor.js';
import { createMessagesEditor } from './prompt-messages-editor.js';
import { renderPromptRender } from './prompt-render.js';
import { createRadioChoice } from './radio-choice.js';
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

  const text = createEntryTextFields('prompt', prompt, 'Description');
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

  const source = createRadioChoice({
    name: 'prompt-source',
    label: 'Messages from',
    groupLabel: 'Messages from',
    options: [
      { value: 'template', id: 'prompt-by-template', label: 'Template' },
      { value: 'code', id: 'prompt-by-code', label: 'Code' },
    ],
    initial: prompt?.code === undefined ? 'template' : 'code',
    onChange: (chosen) => {
      messages.element.hidden = chosen === 'code';
      codeField.hidden = chosen !== 'code';
    },
  });

  await renderEntryEditor(panel, {
    server,
    kind: 'prompt',
    name,
    record: prompt,
    tryTitle: 'Render',
    reload: () => void renderPromptEditor(panel, server, name),
    fields: [
      ...text.elements,
      argumentsEditor.element,
      source.element,
      messages.element,
      codeField,
      settings.element,
    ],
    collect: (): PromptDefinitionInput => ({
      ...text.value(),
      arguments: argumentsEditor.value(),
      ...(source.value() === 'code' ? { code: editor.value() } : { messages: messages.value() }),
      ...settings.value(),
    }),
    slots: () => [
      ...text.slots,
      { path: 'code', message: codeMessage, editor },
      ...argumentsEditor.slots(),
      ...messages.slots(),
      ...settings.slots,
    ],
    renderTry: (section, saved) => renderPromptRender(section, server.subdomain, saved),
  });
}
