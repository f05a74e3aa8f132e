/**
 * How sessions check a client's answer to `sdk.elicit` against the form the
 * tool asked for. The SDK's default validator is one ajv per session (built
 * with every session, ~1 ms) that keeps every schema it ever compiled: a tool
 * asking a thousand times would grow its session's memory a thousand schemas'
 * worth. This one is shared, and forgets each schema once compiled.
 *
 * The schemas are the restricted form MCP allows (flat primitive properties:
 * the SDK's parse has already dropped every other keyword, and
 * calling-client.ts bounds their size), so compiling one is cheap. Formats
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
} from '@modelcontextprotocol/sdk/validation/types.js';

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

/** The one validator of elicitation answers, for every session. */
export const ELICITATION_ANSWERS: jsonSchemaValidator = new ForgetfulValidator();
