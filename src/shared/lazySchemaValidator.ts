// A JSON Schema validator for an SDK Server or Client that builds its ajv instance on first use.
// The SDK builds one per Server/Client up front (~5 ms and ~28 KiB each); loadout's first
// tools/list never validates a schema, and many sessions and downstream clients never do.
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';

/** The SDK's default validator (one ajv per Server/Client, so `$id`s never clash), built lazily. */
export function lazySchemaValidator(): jsonSchemaValidator {
  let validator: AjvJsonSchemaValidator | undefined;
  return {
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      validator ??= new AjvJsonSchemaValidator();
      return validator.getValidator<T>(schema);
    },
  };
}
