/**
 * A resource template's fields: the RFC 6570 URI template, the code that
 * returns the contents of one URI (CodeMirror, completing the template's
 * variables after `params.`), and a completion source per variable — the
 * variables read from the template as it is typed, each source kept by name
 * while its variable stays.
 */
import { createCodeEditor } from './code-editor.js';
import {
  createCompletionSourceField,
  type CompletionSourceField,
} from './completion-source-field.js';
import { h, replaceChildren } from './dom.js';
import { problemMessage, type ProblemSlot } from './field-problems.js';
import { templateVariables } from './template-variables.js';
import type { CompletionSource, ResourceRecord } from '../../store/index.js';

const STARTER_CODE = `// params: the template's variables (strings); env: the secrets listed below.
// Return a string (text), sdk.content blocks, or any value (sent as JSON).
return \`Contents of \${JSON.stringify(params)}\`;
`;

export interface TemplateFields {
  readonly element: HTMLElement;
  value(): { uriTemplate: string; code: string; complete?: Record<string, CompletionSource> };
  slots(): ProblemSlot[];
}

/** Builds the fields of `resource` (a static or a new resource: empty); `secrets` for completion. */
export function createTemplateFields(
  resource: ResourceRecord | undefined,
  secrets: () => string[],
): TemplateFields {
  const templateMessage = problemMessage('resource-uri-template-error');
  const uriTemplate = h('input', {
    id: 'resource-uri-template',
    value: resource?.uriTemplate ?? '',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'weather://{city}/today',
    'aria-describedby': `resource-uri-template-help ${templateMessage.id}`,
  });
  const variables = () => templateVariables(uriTemplate.value);

  const editorHost = h('div', { class: 'code-editor' });
  const editor = createCodeEditor(editorHost, {
    doc: resource?.code ?? STARTER_CODE,
    label: 'Template code',
    describedBy: 'resource-code-help',
    scope: { parameters: variables, secrets },
  });
  const codeMessage = problemMessage('resource-code-error');

  // Sources by variable name: one typed for a variable outlives a typo in the template.
  const sources = new Map<string, CompletionSourceField>();
  for (const [name, source] of Object.entries(resource?.complete ?? {})) {
    sources.set(name, createCompletionSourceField(`Variable ${name}`, source, secrets));
  }
  const completeMessage = problemMessage('resource-complete-error');
  const sourceList = h('div', { class: 'variable-sources' });
  const showSources = () => {
    const names = variables();
    for (const name of names) {
      if (!sources.has(name)) {
        sources.set(name, createCompletionSourceField(`Variable ${name}`, undefined, secrets));
      }
    }
    replaceChildren(
      sourceList,
      names.length === 0
        ? h('p', { class: 'hint' }, 'The template has no {variables} yet.')
        : names.map((name) => sources.get(name)!.element),
    );
  };
  uriTemplate.addEventListener('input', showSources);
  showSources();

  return {
    element: h(
      'div',
      {},
      h(
        'div',
        { class: 'field' },
        h('label', { for: uriTemplate.id }, 'URI template'),
        uriTemplate,
        h(
          'span',
          { id: 'resource-uri-template-help', class: 'hint' },
          'RFC 6570: {var}, {+var}, {#var}, {.var}, {/var}, {?a,b}, {&c}; every variable is a string in params.',
        ),
        templateMessage,
      ),
      h(
        'div',
        { class: 'field' },
        h('span', { class: 'label' }, 'Template code'),
        editorHost,
        h(
          'span',
          { id: 'resource-code-help', class: 'hint' },
          'The body of an async function returning the contents of one URI. Ctrl+Space completes params, env and sdk. Tab leaves the editor.',
        ),
        codeMessage,
      ),
      h(
        'fieldset',
        { class: 'card' },
        h('legend', {}, 'Variable completions'),
        sourceList,
        completeMessage,
      ),
    ),
    value: () => {
      const complete: Record<string, CompletionSource> = {};
      for (const name of variables()) {
        const source = sources.get(name)?.value();
        if (source) complete[name] = source;
      }
      return {
        uriTemplate: uriTemplate.value.trim(),
        code: editor.value(),
        ...(Object.keys(complete).length > 0 ? { complete } : {}),
      };
    },
    slots: () => [
      { path: 'uriTemplate', control: uriTemplate, message: templateMessage },
      { path: 'code', message: codeMessage, editor },
      { path: 'complete', message: completeMessage },
      ...variables().flatMap((name) => sources.get(name)?.slots(`complete.${name}`) ?? []),
    ],
  };
}
