/**
 * A choice between a few options as radio buttons in a labelled radio
 * group (a prompt's messages from a template or code, a resource static or
 * a template, its contents text or binary). An editor shows the fields of
 * the option chosen: `onChange` runs once at the start and on every change.
 */
import { h } from './dom.js';

/** One option: its value, its radio's id and the text of its label. */
export interface RadioOption<V extends string> {
  value: V;
  id: string;
  label: string;
}

export interface RadioChoice<V extends string> {
  readonly element: HTMLElement;
  /** The option chosen. */
  value(): V;
}

/** Builds the group: `label` shows before the radios, `groupLabel` names the group. */
export function createRadioChoice<V extends string>(options: {
  /** The radios' `name`. */
  name: string;
  label: string;
  groupLabel: string;
  options: readonly RadioOption<V>[];
  initial: V;
  onChange(value: V): void;
}): RadioChoice<V> {
  const radios = options.options.map(({ value, id }) => {
    const radio = h('input', { type: 'radio', name: options.name, id });
    radio.value = value;
    radio.checked = value === options.initial;
    return radio;
  });
  const value = () => (radios.find((radio) => radio.checked)?.value ?? options.initial) as V;
  for (const radio of radios) radio.addEventListener('change', () => options.onChange(value()));
  options.onChange(value());
  return {
    element: h(
      'div',
      { class: 'choices', role: 'radiogroup', 'aria-label': options.groupLabel },
      h('span', { class: 'label' }, options.label),
      radios.map((radio, index) =>
        h(
          'span',
          { class: 'choice' },
          radio,
          h('label', { for: radio.id }, options.options[index]!.label),
        ),
      ),
    ),
    value,
  };
}
