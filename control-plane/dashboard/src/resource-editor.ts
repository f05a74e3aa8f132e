/**
 * The resource editor: a static resource (a URI and its text or binary
 * contents) or a resource template (a URI template and the code that reads
 * one URI, with completions per variable), chosen with two radio buttons;
 * title, description, MIME type and the annotations for clients; for a
 * template, the secrets and limits its code runs with. Below: the preview
 * panel and the version history.
 */
import { h } from './dom.js';
import { fetchEntry } from './entry-api.js';
import { renderEntryEditor } from './entry-editor-frame.js';
import { createEntryTextFields } from './entry-text-fields.js';
import { problemMessage } from './field-problems.js';
import { createRadioChoice } from './radio-choice.js';
import { renderResourcePreview } from './resource-preview.js';
import { createStaticFields } from './resource-static-fields.js';
import { createTemplateFields } from './resource-template-fields.js';
import { createRunSettingsFields } from './run-settings-fields.js';
import type { ResourceDefinitionInput, ResourceRecord } from '../../store/index.js';
import type { ServerInfo } from './types.js';

/** Renders the editor of `name` (a new resource when it does not exist yet). */
export async function renderResourceEditor(
  panel: HTMLElement,
  server: ServerInfo,
  name: string,
): Promise<void> {
  const resource = await fetchEntry(server.subdomain, 'resource', name);

  const text = createEntryTextFields('resource', resource, 'Description (optional)');
  const mimeType = h('input', {
    id: 'resource-mime',
    value: resource?.mimeType ?? '',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'text/plain',
    'aria-describedby': 'resource-mime-help resource-mime-error',
  });
  const mimeMessage = problemMessage('resource-mime-error');
  const annotations = createAnnotationFields(resource);
  const settings = createRunSettingsFields('resource', resource);
  const staticFields = createStaticFields(resource);
  const templateFields = createTemplateFields(resource, settings.secretNames);

  const kind = createRadioChoice({
    name: 'resource-kind',
    label: 'Kind',
    groupLabel: 'Resource kind',
    options: [
      { value: 'static', id: 'resource-static', label: 'Static' },
      { value: 'template', id: 'resource-template', label: 'Template' },
    ],
    initial: resource?.uriTemplate !== undefined ? 'template' : 'static',
    onChange: (chosen) => {
      staticFields.element.hidden = chosen === 'template';
      templateFields.element.hidden = chosen !== 'template';
      settings.element.hidden = chosen !== 'template';
    },
  });
  const isTemplate = () => kind.value() === 'template';

  await renderEntryEditor(panel, {
    server,
    kind: 'resource',
    name,
    record: resource,
    tryTitle: 'Preview',
    reload: () => void renderResourceEditor(panel, server, name),
    fields: [
      kind.element,
      ...text.elements,
      h(
        'div',
        { class: 'field' },
        h('label', { for: mimeType.id }, 'MIME type (optional)'),
        mimeType,
        h(
          'span',
          { id: 'resource-mime-help', class: 'hint' },
          'What clients are told the contents are; a template’s text defaults to text/plain.',
        ),
        mimeMessage,
      ),
      staticFields.element,
      templateFields.element,
      annotations.element,
      settings.element,
    ],
    collect: (): ResourceDefinitionInput => {
      const annotationValue = annotations.value();
      const { description, ...title } = text.value();
      return {
        ...title,
        ...(description.trim() ? { description } : {}),
        ...(mimeType.value.trim() ? { mimeType: mimeType.value.trim() } : {}),
        ...(annotationValue ? { annotations: annotationValue } : {}),
        ...(isTemplate()
          ? { ...templateFields.value(), ...settings.value() }
          : staticFields.value()),
      };
    },
    slots: () => [
      ...text.slots,
      { path: 'mimeType', control: mimeType, message: mimeMessage },
      ...annotations.slots,
      ...(isTemplate() ? [...templateFields.slots(), ...settings.slots] : staticFields.slots),
    ],
    renderTry: (section, saved) => renderResourcePreview(section, server.subdomain, saved),
  });
}

/** Who the contents are for and how much they matter: hints for clients, both optional. */
function createAnnotationFields(resource: ResourceRecord | undefined) {
  const message = problemMessage('resource-annotations-error');
  const audience = (['user', 'assistant'] as const).map((who) => {
    const box = h('input', { type: 'checkbox', id: `resource-audience-${who}`, value: who });
    box.checked = resource?.annotations?.audience?.includes(who) ?? false;
    return box;
  });
  const priority = h('input', {
    id: 'resource-priority',
    type: 'number',
    min: 0,
    max: 1,
    step: 'any',
    value: resource?.annotations?.priority ?? '',
    'aria-describedby': 'resource-priority-help',
  });
  return {
    element: h(
      'fieldset',
      { class: 'card' },
      h('legend', {}, 'Annotations (optional)'),
      h(
        'div',
        { class: 'choices', role: 'group', 'aria-label': 'Audience' },
        h('span', { class: 'label' }, 'Audience'),
        audience.map((box) =>
          h('span', { class: 'choice' }, box, h('label', { for: box.id }, box.value)),
        ),
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: priority.id }, 'Priority'),
        priority,
        h(
          'span',
          { id: 'resource-priority-help', class: 'hint' },
          '0 (least) to 1 (most important); empty for none.',
        ),
      ),
      message,
    ),
    value: (): ResourceDefinitionInput['annotations'] => {
      const chosen = audience.filter((box) => box.checked).map((box) => box.value);
      const value = {
        ...(chosen.length > 0 ? { audience: chosen as ('user' | 'assistant')[] } : {}),
        ...(priority.value !== '' ? { priority: Number(priority.value) } : {}),
      };
      return Object.keys(value).length > 0 ? value : undefined;
    },
    slots: [
      { path: 'annotations', message },
      { path: 'annotations.priority', control: priority, message },
    ],
  };
}
