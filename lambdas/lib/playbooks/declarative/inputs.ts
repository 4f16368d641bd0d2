/**
 * Inputs described by JSON Schema, checked by Ajv (the reference JSON Schema validator, with
 * `ajv-formats` for `email`, `uri`, `date`...), wrapped as the zod schema the contract's
 * `inputSchema` is: every Ajv error becomes an issue at its field, so `POST /jobs` names
 * `inputs.address.postcode` exactly as for a TypeScript playbook.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { z } from 'zod';

// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

let ajv: Ajv | undefined;
function validator(): Ajv {
  ajv ??= addFormats(new Ajv({ allErrors: true, strict: false }));
  return ajv;
}

/** Compiles a JSON Schema; a schema Ajv cannot use is reported with Ajv's words. */
export function compileInputSchema(schema: Record<string, unknown>): ValidateFunction {
  return validator().compile(schema);
}

function issueOf(e: ErrorObject): { path: (string | number)[]; message: string } {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required')
    return { path: [...path, String(params.missingProperty)], message: 'is required' };
  if (e.keyword === 'additionalProperties')
    return { path: [...path, String(params.additionalProperty)], message: 'is not a field of these inputs' };
  return { path, message: e.message ?? 'is not valid' };
}

/**
 * The zod schema of inputs described by `jsonSchema` (which must describe an object).
 * @throws Error with Ajv's message when the schema itself is not valid
 */
export function jsonSchemaInputs(jsonSchema: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  const validate = compileInputSchema(jsonSchema);
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    if (validate(value)) return;
    for (const e of validate.errors ?? []) {
      const { path, message } = issueOf(e);
      ctx.addIssue({ code: 'custom', path, message });
    }
  });
}
