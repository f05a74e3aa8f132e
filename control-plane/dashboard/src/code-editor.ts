/**
 * The tool code editor: CodeMirror 6 with JavaScript highlighting, line
 * numbers, bracket matching, and completion of what tool code has in scope
 * (`params.<declared>`, `env.<listed secret>`, the `sdk` members, the web platform,
 * `console`). Syntax errors are marked while typing (`syntax-check.ts`); one
 * reported by the control plane (a save, a test run) is marked on its line
 * and column. Tab is left to the browser so keyboard users can leave the editor.
 * Every editor inside an element can be made read-only at once.
 */
import { autocompletion, closeBrackets } from '@codemirror/autocomplete';
import { javascript, localCompletionSource } from '@codemirror/lang-javascript';
import {
  bracketMatching,
  defaultHighlightStyle,
  indentOnInput,
  syntaxHighlighting,
} from '@codemirror/language';
import {
  Compartment,
  EditorState,
  StateEffect,
  StateField,
  type Extension,
  type Line,
} from '@codemirror/state';
import {
  Decoration,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  lineNumbers,
  type DecorationSet,
} from '@codemirror/view';
import { liveSyntaxCheck } from './syntax-check.js';
import { toolScopeCompletions, type EditorScope } from './tool-completions.js';

export type { EditorScope };

/** A code editor bound to a label. */
export interface CodeEditor {
  readonly view: EditorView;
  /** The current text. */
  value(): string;
  /**
   * Marks `line` (1-based) as erroneous, `column` (1-based) too when known,
   * and moves the cursor there; null clears the mark.
   */
  markError(line: number | null, message?: string, column?: number): void;
}

/** Whether an editor accepts typing; switched off for a role that may only read the code. */
const editability = new Compartment();

const setErrorLine = StateEffect.define<{
  line: number;
  message: string;
  column?: number;
} | null>();

/** Highlights the line (and column) a save or a run reported an error at, until the next edit. */
const errorLineField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(decorations, transaction) {
    let next = transaction.docChanged ? Decoration.none : decorations;
    for (const effect of transaction.effects) {
      if (!effect.is(setErrorLine)) continue;
      if (effect.value === null) {
        next = Decoration.none;
        continue;
      }
      const lineNumber = Math.min(Math.max(effect.value.line, 1), transaction.state.doc.lines);
      const line = transaction.state.doc.line(lineNumber);
      const at = columnPosition(line, effect.value.column);
      next = Decoration.set([
        Decoration.line({
          class: 'cm-error-line',
          attributes: { title: effect.value.message, 'data-error-line': String(lineNumber) },
        }).range(line.from),
        ...(at !== undefined && at < line.to
          ? [
              Decoration.mark({
                class: 'cm-error-column',
                attributes: { 'data-error-column': String(effect.value.column) },
              }).range(at, at + 1),
            ]
          : []),
      ]);
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

/**
 * Creates an editor in `parent`; `label` names it for assistive technology,
 * or `labelledBy` (the id of an element whose text names it), for a label
 * that changes, e.g. with a row's position.
 */
export function createCodeEditor(
  parent: HTMLElement,
  options: {
    doc: string;
    label?: string;
    labelledBy?: string;
    describedBy?: string;
    scope: EditorScope;
    /** Where the first syntax error found while typing is said (emptied when there is none). */
    syntaxStatus?: HTMLElement;
  },
): CodeEditor {
  const status = options.syntaxStatus;
  const extensions: Extension[] = [
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightActiveLine(),
    indentOnInput(),
    bracketMatching(),
    closeBrackets(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    javascript(),
    autocompletion({ override: [toolScopeCompletions(options.scope), localCompletionSource] }),
    errorLineField,
    liveSyntaxCheck(
      status &&
        ((first) => {
          status.textContent = first
            ? `Syntax error at line ${first.line}, column ${first.column}: ${first.message}.`
            : '';
        }),
    ),
    editability.of([]),
    EditorView.lineWrapping,
    // The page's Content-Security-Policy admits CodeMirror's <style> element by this nonce.
    EditorView.cspNonce.of(
      document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content ?? '',
    ),
    EditorView.contentAttributes.of({
      ...(options.labelledBy
        ? { 'aria-labelledby': options.labelledBy }
        : { 'aria-label': options.label ?? 'Code' }),
      ...(options.describedBy ? { 'aria-describedby': options.describedBy } : {}),
    }),
  ];
  const view = new EditorView({
    parent,
    state: EditorState.create({ doc: options.doc, extensions }),
  });
  return {
    view,
    value: () => view.state.doc.toString(),
    markError(line, message = '', column) {
      if (line === null) {
        view.dispatch({ effects: setErrorLine.of(null) });
        return;
      }
      const target = view.state.doc.line(Math.min(Math.max(line, 1), view.state.doc.lines));
      const anchor = Math.min(columnPosition(target, column) ?? target.from, target.to);
      view.dispatch({
        effects: [
          setErrorLine.of({ line, message, column }),
          EditorView.scrollIntoView(anchor, { y: 'center' }),
        ],
        selection: { anchor },
      });
    },
  };
}

/** The document position of `column` (1-based) on `line`; undefined when no column is known. */
function columnPosition(line: Line, column: number | undefined): number | undefined {
  if (column === undefined || !Number.isInteger(column) || column < 1) return undefined;
  return Math.min(line.from + column - 1, line.to);
}

/** Makes every code editor inside `root` read-only (it can still be focused, read and selected). */
export function makeEditorsReadOnly(root: Element): void {
  root.querySelectorAll<HTMLElement>('.cm-editor').forEach((element) => {
    EditorView.findFromDOM(element)?.dispatch({
      // Still focusable (keyboard users read it), announced read-only, refusing every change.
      effects: editability.reconfigure([
        EditorState.readOnly.of(true),
        EditorView.contentAttributes.of({ 'aria-readonly': 'true' }),
      ]),
    });
  });
}
