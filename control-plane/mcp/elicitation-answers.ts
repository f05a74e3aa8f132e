/**
 * The forms tool code asks a person to fill in (`sdk.elicit`), in both eras:
 * their size bound, and how a client's answer is checked against the form.
 * The SDK's default validator is one ajv per server instance (built with every
 * session, ~1 ms) that keeps every schema it ever compiled: a tool asking a
 * thousand times would grow its session's memory a thousand schemas' worth.
 * This one is shared, and forgets each schema once compiled.
 *
 * The schemas are the restricted form MCP allows (flat primitive properties:
 * the SDK's parse has already dropped every other keyword, and
 * `checkFormSize` bounds their size), so compiling one is cheap. Formats
 * (`email`, `uri`, `date`, …) are the client's to enforce in its form; they
 * are not asserted here, where a format's regular expression would run on the
 * control plane's thread over text a client chose. The tool should read the
 * answer as untrusted input either way.
 */
import { Ajv } from 'ajv';
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/server';
import { McphostError } from '../errors.js';

class ForgetfulValidator implements jsonSchemaValidator {
  readonly #ajv = new Ajv({
    strict: false,
    validateFormats: false,
    validateSchema: false,
    allErrors: false,
    logger: false,
  });

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const validate = this.#ajv.compile(schema);
    this.#ajv.removeSchema(schema);
    return (input) =>
      validate(input)
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: this.#ajv.errorsText(validate.errors) };
  }
}

/** The one validator of elicitation answers, for every session and every modern call. */
export const FORM_ANSWERS: jsonSchemaValidator = new ForgetfulValidator();

/** A form a person fills in; bounded so that checking the answer stays cheap. */
const MAX_FORM_FIELDS = 64;
const MAX_FORM_SCHEMA_CHARACTERS = 64 * 1024;

/** Refuses (ERR_INVALID_ARGUMENT, naming `name`) a form too large to ask a person to fill in. */
export function checkFormSize(name: string, schema: { properties: Record<string, unknown> }): void {
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
