/**
 * Secret values never leave in logs or error messages: each occurrence of a
 * secret the tool can see is replaced by `[REDACTED:NAME]` before anything is
 * stored, streamed or returned. Values shorter than 4 characters are left
 * alone — redacting "a" would shred every line and protect nothing.
 */

const MIN_REDACTED_LENGTH = 4;

export type Redactor = (text: string) => string;

/** Builds a redactor for one invocation's secrets (longest values first). */
export function createRedactor(env: Readonly<Record<string, string>>): Redactor {
  const replacements: [string, string][] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value.length < MIN_REDACTED_LENGTH) continue;
    replacements.push([value, `[REDACTED:${name}]`]);
    // The same value as it appears inside JSON text (quotes, backslashes escaped).
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) replacements.push([escaped, `[REDACTED:${name}]`]);
  }
  if (replacements.length === 0) return (text) => text;
  replacements.sort((a, b) => b[0].length - a[0].length);
  return (text) => {
    let result = text;
    for (const [value, marker] of replacements) {
      if (result.includes(value)) result = result.replaceAll(value, marker);
    }
    return result;
  };
}
