/**
 * A tool's title and its behaviour hints (MCP annotations) in the editor.
 * Each hint is a choice of three — not said, yes, no — because "not said"
 * means MCP's default, which differs per hint (destructive and open world
 * default to yes), and a checkbox cannot say it.
 */
import { h } from './dom.js';
import type { ToolAnnotations, ToolDefinitionInput, ToolRecord } from '../../store/index.js';

type Hint = 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint';

const HINTS: { hint: Hint; label: string; meaning: string }[] = [
  { hint: 'readOnlyHint', label: 'Read-only', meaning: 'does not change anything' },
  {
    hint: 'destructiveHint',
    label: 'Destructive',
    meaning: 'may delete or overwrite (MCP default: yes)',
  },
  { hint: 'idempotentHint', label: 'Idempotent', meaning: 'repeating a call changes nothing more' },
  {
    hint: 'openWorldHint',
    label: 'Open world',
    meaning: 'reaches outside systems (MCP default: yes)',
  },
];

export interface HintsFields {
  readonly title: HTMLElement;
  readonly hints: HTMLElement;
  value(): Pick<ToolDefinitionInput, 'title' | 'annotations'>;
}

/** Builds the title field and the hints fieldset for `tool` (undefined: a new tool). */
export function createHintsFields(tool: ToolRecord | undefined): HintsFields {
  const title = h('input', {
    id: 'tool-title',
    value: tool?.title ?? '',
    autocomplete: 'off',
    maxlength: 256,
    'aria-describedby': 'tool-title-help',
  });
  const selects = HINTS.map(({ hint, label, meaning }) => {
    const id = `tool-${hint}`;
    const select = h(
      'select',
      { id, 'aria-describedby': `${id}-help` },
      h('option', { value: '' }, 'Not said'),
      h('option', { value: 'true' }, 'Yes'),
      h('option', { value: 'false' }, 'No'),
    );
    const saved = tool?.annotations?.[hint];
    select.value = saved === undefined ? '' : String(saved);
    const field = h(
      'div',
      { class: 'field' },
      h('label', { for: id }, label),
      select,
      h('span', { id: `${id}-help`, class: 'hint' }, meaning),
    );
    return { hint, select, field };
  });
  return {
    title: h(
      'div',
      { class: 'field' },
      h('label', { for: title.id }, 'Title (optional)'),
      title,
      h(
        'span',
        { id: 'tool-title-help', class: 'hint' },
        'A human-readable name clients may show instead of the tool name.',
      ),
    ),
    hints: h(
      'fieldset',
      { class: 'card' },
      h('legend', {}, 'Behaviour hints for clients'),
      h(
        'div',
        { class: 'fields' },
        selects.map((entry) => entry.field),
      ),
    ),
    value: () => {
      // A title kept inside the annotations (saved over the API) is carried over untouched.
      const annotations: ToolAnnotations = tool?.annotations?.title
        ? { title: tool.annotations.title }
        : {};
      for (const { hint, select } of selects) {
        if (select.value !== '') annotations[hint] = select.value === 'true';
      }
      const titleText = title.value.trim();
      return {
        ...(titleText === '' ? {} : { title: titleText }),
        ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
      };
    },
  };
}
