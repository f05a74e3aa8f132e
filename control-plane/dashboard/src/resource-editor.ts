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
import { problemMessage } from './field-problems.js';
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

  const title = h('input', {
    id: 'resource-title',
    value: resource?.title ?? '',
    autocomplete: 'off',
    maxlength: 256,
    'aria-describedby': 'resource-title-error',
  });
  const titleMessage = problemMessage('resource-title-error');
  const description = h('textarea', {
    id: 'resource-description',
    rows: 2,
    'aria-describedby': 'resource-description-error',
  });
  description.value = resource?.description ?? '';
  const descriptionMessage = problemMessage('resource-description-error');
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

  const isStatic = h('input', { type: 'radio', name: 'resource-kind', id: 'resource-static' });
  const isTemplate = h('input', { type: 'radio', name: 'resource-kind', id: 'resource-template' });
  isTemplate.checked = resource?.uriTemplate !== undefined;
  isStatic.checked = !isTemplate.checked;
  const showKind = () => {
    staticFields.element.hidden = isTemplate.checked;
    templateFields.element.hidden = !isTemplate.checked;
    settings.element.hidden = !isTemplate.checked;
  };
  isStatic.addEventListener('change', showKind);
  isTemplate.addEventListener('change', showKind);
  showKind();

  await renderEntryEditor(panel, {
    server,
    kind: 'resource',
    name,
    record: resource,
    tryTitle: 'Preview',
    reload: () => void renderResourceEditor(panel, server, name),
    fields: [
      h(
        'div',
        { class: 'choices', role: 'radiogroup', 'aria-label': 'Resource kind' },
        h('span', { class: 'label' }, 'Kind'),
        h('span', { class: 'choice' }, isStatic, h('label', { for: isStatic.id }, 'Static')),
        h('span', { class: 'choice' }, isTemplate, h('label', { for: isTemplate.id }, 'Template')),
      ),
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
        h('label', { for: description.id }, 'Description (optional)'),
        description,
        descriptionMessage,
      ),
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
      return {
        ...(title.value.trim() ? { title: title.value.trim() } : {}),
        ...(description.value.trim() ? { description: description.value } : {}),
        ...(mimeType.value.trim() ? { mimeType: mimeType.value.trim() } : {}),
        ...(annotationValue ? { annotations: annotationValue } : {}),
        ...(isTemplate.checked
          ? { ...templateFields.value(), ...settings.value() }
          : staticFields.value()),
      };
    },
    slots: () => [
      { path: 'title', control: title, message: titleMessage },
      { path: 'description', control: description, message: descriptionMessage },
      { path: 'mimeType', control: mimeType, message: mimeMessage },
      ...annotations.slots,
      ...(isTemplate.checked ? [...templateFields.slots(), ...settings.slots] : staticFields.slots),
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
