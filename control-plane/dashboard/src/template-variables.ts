/**
 * The variable names of an RFC 6570 URI template (`weather://{city}/{?day,unit}`),
 * read in the browser to offer a completion source and a preview input per
 * variable. Only names are read: whether the template is usable is the
 * control plane's to say when it is saved.
 */

const EXPRESSION = /\{([^{}]*)\}/g;
const OPERATOR = /^[+#./?&;]/;
const NAME = /^[A-Za-z0-9_]+$/;

/** The names in order of appearance, each once; malformed ones are left out. */
export function templateVariables(template: string): string[] {
  const names: string[] = [];
  for (const [, body] of template.matchAll(EXPRESSION)) {
    for (const raw of body!.replace(OPERATOR, '').split(',')) {
      const name = raw.trim();
      if (NAME.test(name) && !names.includes(name)) names.push(name);
    }
  }
  return names;
}
