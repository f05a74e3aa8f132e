/**
 * The forms tool code asks a person to fill in (`sdk.elicit`), in both eras:
 * the form as it is stored and sent (rebuilt of MCP's keywords, bounded in
 * size), and how a client's answer is checked against it.
 *
 * The SDK's default validator is one ajv per server instance, and an ajv
 * compiles whatever keywords the form holds and keeps every schema it ever
 * compiled. FORM_ANSWERS reads the form's MCP keywords instead
 * (form-schema.ts): it holds no state, so it is shared by every session and
 * every modern call, and checking an answer costs time linear in the form and
 * the answer. Formats (`email`, `uri`, `date`, `date-time`) are checked
 * without regular expressions (form-formats.ts). The tool should still read
 * the answer as untrusted input: the client chose it.
 */
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/server';
import { McphostError } from '../errors.js';
import { answerProblem, restrictedForm, type Form } from './form-schema.js';

/**
 * The one validator of elicitation answers, for every session and every
 * modern call (the SDK's `jsonSchemaValidator`). It keeps nothing: each
 * `getValidator` rebuilds the form it is given of MCP's keywords only.
 */
export const FORM_ANSWERS: jsonSchemaValidator = Object.freeze({
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const form = restrictedForm('elicitation form', schema);
    return (input: unknown) => {
      const problem = answerProblem(form, input);
      return problem === undefined
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: problem };
    };
  },
});

/**
 * The parameters of a form request, as the SDK parsed them, with the form
 * rebuilt of MCP's keywords only: what is stored, sent to the client and
 * checked, in both eras. Refuses (ERR_INVALID_ARGUMENT, naming `name`) a form
 * too large to ask a person to fill in.
 */
export function restrictedFormRequest<P extends { requestedSchema: object }>(
  name: string,
  params: P,
): Omit<P, 'requestedSchema'> & { requestedSchema: Form } {
  const requestedSchema = restrictedForm(name, params.requestedSchema);
  checkFormSize(name, requestedSchema);
  return { ...params, requestedSchema };
}

/** A form a person fills in; bounded so that checking the answer stays cheap. */
const MAX_FORM_FIELDS = 64;
const MAX_FORM_SCHEMA_CHARACTERS = 64 * 1024;

/** Refuses (ERR_INVALID_ARGUMENT, naming `name`) a form too large to ask a person to fill in. */
function checkFormSize(name: string, schema: { properties: Record<string, unknown> }): void {
  const fields = Object.keys(schema.properties).length;
  if (fields > MAX_FORM_FIELDS) {
    throw new McphostError(
      'ERR_INVALID_ARGUMENT',
      `${name}: requestedSchema has ${fields} properties; a form may have at most ${MAX_FORM_FIELDS}`,
    );
  }
  const characters = JSON.stringify(schema).length;
  if (characters > MAX_FORM_SCHEMA_CHARACTERS) {
    throw new McphostError(
      'ERR_INVALID_ARGUMENT',
      `${name}: requestedSchema is ${characters} characters of JSON; at most ${MAX_FORM_SCHEMA_CHARACTERS}`,
    );
  }
}

/** @deprecated the SDK v1 server's name for FORM_ANSWERS, until the sessions move to SDK v2. */
export const ELICITATION_ANSWERS = FORM_ANSWERS;
