/**
 * The operations of Zekt's OpenAPI document, as the generated suites (fuzzing, the cross-tenant
 * matrix) walk them: a route added to the server is in their scope without anyone listing it.
 */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  additionalProperties?: boolean | JsonSchema;
}

export interface Operation {
  method: string;
  /** The template, e.g. `/api/v1/services/{id}`. */
  path: string;
  pathParams: string[];
  queryParams: Array<{ name: string; schema: JsonSchema; required: boolean }>;
  headerParams: string[];
  /** The JSON request body's schema, when the operation takes one. */
  body: JsonSchema | null;
  security: string[];
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: Array<{ in: string; name: string; required?: boolean; schema?: JsonSchema }>;
        requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
        security?: Array<Record<string, string[]>>;
      }
    >
  >;
}

export function listOperations(document: unknown): Operation[] {
  const doc = document as OpenApiDocument;
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const parameters = operation.parameters ?? [];
      return {
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: parameters
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, schema: p.schema ?? {}, required: p.required === true })),
        headerParams: parameters.filter((p) => p.in === 'header').map((p) => p.name),
        body: operation.requestBody?.content?.['application/json']?.schema ?? null,
        security: (operation.security ?? []).flatMap((s) => Object.keys(s)),
      };
    }),
  );
}

/** The path with its parameters filled in (values used as given: the caller encodes them). */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${template}`);
    return value;
  });
}
