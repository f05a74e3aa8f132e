/**
 * The tool code editor: CodeMirror 6 with JavaScript highlighting, line
 * numbers, bracket matching, and completion of what tool code has in scope
 * (`params.<declared>`, `env.<listed secret>`, the `sdk` members, the web platform,
 * `console`). A syntax error reported by the control plane is marked on its
 * line. Tab is left to the browser so keyboard users can leave the editor.
 * Every editor inside an element can be made read-only at once.
 */
import {
  autocompletion,
  closeBrackets,
  type Completion,
  type CompletionContext,
  type CompletionResult,
} from '@codemirror/autocomplete';
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
} from '@codemirror/state';
import {
  Decoration,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  lineNumbers,
  type DecorationSet,
} from '@codemirror/view';

/** What the completion offers after `params.` and `env.`; read on every completion. */
export interface EditorScope {
  parameters(): string[];
  secrets(): string[];
}

/** A code editor bound to a label. */
export interface CodeEditor {
  readonly view: EditorView;
  /** The current text. */
  value(): string;
  /** Marks `line` (1-based) as erroneous and moves the cursor there; null clears the mark. */
  markError(line: number | null, message?: string): void;
}

/** Whether an editor accepts typing; switched off for a role that may only read the code. */
const editability = new Compartment();

const setErrorLine = StateEffect.define<{ line: number; message: string } | null>();

/** Highlights the line a save reported a syntax error on, until the next edit. */
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
      next = Decoration.set([
        Decoration.line({
          class: 'cm-error-line',
          attributes: { title: effect.value.message, 'data-error-line': String(lineNumber) },
        }).range(line.from),
      ]);
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

// The names of docs/tool-code.md, so the reference, the completion and the examples agree.
const SDK_MEMBERS: Completion[] = [
  {
    label: 'http',
    type: 'function',
    detail: '({method, url, headers?, body?})',
    info: 'HTTP request through the broker; returns {status(), body(), headers(), json()}.',
  },
  {
    label: 'db',
    type: 'function',
    detail: '({type, connection})',
    info: 'A pg or mysql handle: select, insert, query.',
  },
  { label: 'lodash', type: 'namespace', info: 'The lodash library.' },
  {
    label: 'content',
    type: 'namespace',
    info: 'Builders of MCP content blocks: text, image, audio, resource. Return one or an array.',
  },
  {
    label: 'progress',
    type: 'function',
    detail: '(progress, total?, message?)',
    info: 'A progress notification, when the client asked for progress.',
  },
  {
    label: 'closeStream',
    type: 'function',
    detail: '()',
    info: 'Ends the response carrying this call; a client that can resume (SEP-1699) reconnects for the result.',
  },
  {
    label: 'elicit',
    type: 'function',
    detail: '(message, requestedSchema, {key?})',
    info: 'Asks the calling client for input; resolves with {action, content?}.',
  },
  {
    label: 'sample',
    type: 'function',
    detail: '({messages, maxTokens, systemPrompt?}, {key?})',
    info: "Asks the calling client's model for a completion; resolves with its result.",
  },
  {
    label: 'roots',
    type: 'function',
    detail: '({key?})',
    info: 'Asks the calling client for its roots; resolves with {roots: [{uri, name?}]}.',
  },
  {
    label: 'client',
    type: 'variable',
    detail: '{protocolVersion, era, capabilities, info?}',
    info: 'What the calling client declared (frozen); null in a test run.',
  },
];
const CONTENT_MEMBERS: Completion[] = [
  { label: 'text', type: 'function', detail: '(text)' },
  { label: 'image', type: 'function', detail: '(base64, mimeType)' },
  { label: 'audio', type: 'function', detail: '(base64, mimeType)' },
  { label: 'resource', type: 'function', detail: '({uri, mimeType?, text | blob})' },
];
const CONSOLE_MEMBERS: Completion[] = ['log', 'info', 'warn', 'error', 'debug'].map((label) => ({
  label,
  type: 'method',
}));
/** The web platform of tool code (made inside its own realm; fetch goes through the broker). */
const WEB_PLATFORM: Completion[] = [
  ['fetch', 'function', 'HTTP through the broker; returns a Response.'],
  ['URL', 'class', 'The WHATWG URL parser.'],
  ['URLSearchParams', 'class', 'Query strings.'],
  ['TextEncoder', 'class', 'UTF-8 encoding.'],
  ['TextDecoder', 'class', 'UTF-8 decoding.'],
  ['atob', 'function', 'Base64 to a binary string.'],
  ['btoa', 'function', 'A binary string to base64.'],
  ['structuredClone', 'function', 'A deep copy.'],
  ['AbortController', 'class', 'Abort fetch and timers.'],
  ['AbortSignal', 'class', 'AbortSignal.timeout(ms), AbortSignal.abort().'],
  ['performance', 'namespace', 'performance.now()'],
  ['crypto', 'namespace', 'randomUUID(), getRandomValues(), subtle (digest, HMAC).'],
].map(([label, type, info]) => ({ label: label!, type: type!, info: info! }));
const TOP_LEVEL: Completion[] = [
  { label: 'params', type: 'variable', info: 'The arguments of this call.' },
  { label: 'env', type: 'variable', info: 'The secrets this tool lists, by name.' },
  {
    label: 'sdk',
    type: 'namespace',
    info: 'http, db, lodash, content, progress, closeStream, elicit, sample, roots, client',
  },
  { label: 'console', type: 'namespace', info: 'console.log / console.error are captured.' },
  ...WEB_PLATFORM,
];

/** Completes the names tool code has in scope. */
function toolScopeCompletions(scope: EditorScope) {
  return (context: CompletionContext): CompletionResult | null => {
    const member = context.matchBefore(/\b(params|env|sdk\.content|sdk|console)\.[\w$]*$/);
    if (member) {
      const object = member.text.slice(0, member.text.lastIndexOf('.'));
      const from = member.from + object.length + 1;
      const options: Completion[] =
        object === 'params'
          ? scope.parameters().map((label) => ({ label, type: 'property', detail: 'parameter' }))
          : object === 'env'
            ? scope.secrets().map((label) => ({ label, type: 'constant', detail: 'secret' }))
            : object === 'sdk'
              ? SDK_MEMBERS
              : object === 'sdk.content'
                ? CONTENT_MEMBERS
                : CONSOLE_MEMBERS;
      return { from, options, validFor: /^[\w$]*$/ };
    }
    const word = context.matchBefore(/[\w$]+$/);
    if (!word && !context.explicit) return null;
    return { from: word?.from ?? context.pos, options: TOP_LEVEL, validFor: /^[\w$]*$/ };
  };
}

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
  },
): CodeEditor {
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
    markError(line, message = '') {
      if (line === null) {
        view.dispatch({ effects: setErrorLine.of(null) });
        return;
      }
      const target = view.state.doc.line(Math.min(Math.max(line, 1), view.state.doc.lines));
      view.dispatch({
        effects: [
          setErrorLine.of({ line, message }),
          EditorView.scrollIntoView(target.from, { y: 'center' }),
        ],
        selection: { anchor: target.from },
      });
    },
  };
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
