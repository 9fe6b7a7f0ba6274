/**
 * Turns an OpenAPI 3.0 schema into plain JSON Schema for Ajv: `nullable: true` becomes
 * `anyOf: [schema, { type: 'null' }]`. Ajv understands `nullable` only next to `type`, and GitHub's
 * description also puts it beside `allOf`/`oneOf`/`enum`.
 *
 * It also undoes one flaw of the dereferenced file: an installation's `account` is
 * `anyOf: [simple-user, enterprise]` in `api.github.com.json`, but `allOf` in
 * `api.github.com.deref.json` — which no real account (user or enterprise, never both) satisfies.
 */
export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    // `example(s)` can hold anything (including objects shaped like schemas): copy as is.
    out[key] = key === 'example' || key === 'examples' || key === 'enum' ? value : toJsonSchema(value);
  }
  const allOf = out.allOf;
  if (
    Array.isArray(allOf) &&
    allOf.length === 2 &&
    (allOf[0] as { title?: unknown }).title === 'Simple User' &&
    (allOf[1] as { title?: unknown }).title === 'Enterprise'
  ) {
    delete out.allOf;
    out.anyOf = allOf;
  }
  if (out.nullable === true) {
    delete out.nullable;
    return { anyOf: [out, { type: 'null' }] };
  }
  delete out.nullable;
  return out;
}
