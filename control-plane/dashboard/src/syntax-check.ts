/**
 * Syntax errors marked while typing, in the browser, with the parser the
 * editor already has for highlighting (Lezer's JavaScript grammar): a pause
 * in typing marks each place the grammar could not read — the token
 * underlined, its line tinted — and reports the first as "line, column:
 * unexpected …". The control plane's check when the tool is saved (V8's)
 * stays the one that decides: it also refuses what the grammar alone does
 * not see, such as a `let` declared twice. A CSP without `unsafe-eval` rules
 * out `new Function` here anyway.
 */
import { ensureSyntaxTree, syntaxTree } from '@codemirror/language';
import { StateEffect, StateField, type EditorState, type Extension } from '@codemirror/state';
import {
  Decoration,
  EditorView,
  ViewPlugin,
  WidgetType,
  type DecorationSet,
  type ViewUpdate,
} from '@codemirror/view';

/** How long typing must pause before the code is checked, in milliseconds. */
const PAUSE_MS = 400;
/** At most this many places are marked: after the first few, the parser is mostly lost. */
const MAX_MARKS = 5;
/** How long the parser may take to finish a tree for the check, in milliseconds. */
const PARSE_BUDGET_MS = 200;

/** A place the grammar could not read; `line` and `column` from 1. */
export interface LiveSyntaxError {
  line: number;
  column: number;
  message: string;
  from: number;
  to: number;
}

/** Told the first error after each check, or null when the code reads. */
export type SyntaxReport = (first: LiveSyntaxError | null) => void;

const setErrors = StateEffect.define<LiveSyntaxError[]>();

/** An error at the end of a line (nothing to underline): a mark after the last character. */
class EndOfLineMark extends WidgetType {
  toDOM(): HTMLElement {
    const mark = document.createElement('span');
    mark.className = 'cm-syntax-error-end';
    mark.setAttribute('aria-hidden', 'true');
    return mark;
  }
}

const errorMarks = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, transaction) {
    let next = marks.map(transaction.changes);
    for (const effect of transaction.effects) {
      if (effect.is(setErrors)) next = decorationsOf(transaction.state, effect.value);
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

/** The places the syntax tree of `state` holds an error node, in order. */
export function findSyntaxErrors(state: EditorState): LiveSyntaxError[] {
  const tree = ensureSyntaxTree(state, state.doc.length, PARSE_BUDGET_MS) ?? syntaxTree(state);
  const errors: LiveSyntaxError[] = [];
  tree.iterate({
    enter: (node) => {
      if (!node.type.isError || errors.length >= MAX_MARKS) return;
      // Recovery often leaves several error nodes at one place: one mark is enough.
      if (errors.some((seen) => seen.from === node.from)) return;
      const line = state.doc.lineAt(node.from);
      errors.push({
        line: line.number,
        column: node.from - line.from + 1,
        message: describe(state, node.from, node.to),
        from: node.from,
        to: node.to,
      });
    },
  });
  return errors;
}

/** "unexpected “;”", or that the code ended early. */
function describe(state: EditorState, from: number, to: number): string {
  if (from >= state.doc.length) {
    return 'the code ends too early (a bracket, brace or quote left open?)';
  }
  const rest = state.doc.sliceString(from, Math.max(to, from + 40));
  const token = /^\s*([\w$]+|\S)/.exec(rest)?.[1];
  return token === undefined ? 'unexpected end of line' : `unexpected “${token}”`;
}

function decorationsOf(state: EditorState, errors: readonly LiveSyntaxError[]): DecorationSet {
  const ranges = errors.flatMap((error) => {
    const line = state.doc.line(error.line);
    const lineMark = Decoration.line({ class: 'cm-syntax-error-line' }).range(line.from);
    if (error.from >= line.to) {
      return [lineMark, Decoration.widget({ widget: new EndOfLineMark(), side: 1 }).range(line.to)];
    }
    const to = Math.min(Math.max(error.to, error.from + 1), line.to);
    const mark = Decoration.mark({
      class: 'cm-syntax-error',
      attributes: { title: `Syntax error: ${error.message}` },
    }).range(error.from, to);
    return [lineMark, mark];
  });
  return Decoration.set(ranges, true);
}

/** The extension: checks after each pause in typing (and once at the start), marks, reports. */
export function liveSyntaxCheck(report?: SyntaxReport): Extension {
  const checker = ViewPlugin.fromClass(
    class {
      timer: number | undefined;
      constructor(readonly view: EditorView) {
        this.schedule();
      }
      update(update: ViewUpdate): void {
        if (update.docChanged || syntaxTree(update.state) !== syntaxTree(update.startState)) {
          this.schedule();
        }
      }
      schedule(): void {
        window.clearTimeout(this.timer);
        this.timer = window.setTimeout(() => {
          const errors = findSyntaxErrors(this.view.state);
          this.view.dispatch({ effects: setErrors.of(errors) });
          report?.(errors[0] ?? null);
        }, PAUSE_MS);
      }
      destroy(): void {
        window.clearTimeout(this.timer);
      }
    },
  );
  return [errorMarks, checker];
}
