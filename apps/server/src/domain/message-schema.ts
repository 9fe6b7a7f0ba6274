/**
 * Event contracts: a service's message schema (JSON Schema draft 2020-12), the rules a schema must
 * follow to be saved, and what the checks of one message against the schemas of its workflow's
 * services decide. Pure: the validator itself (Ajv) lives in contracts/, this file has the rules.
 */
export type JsonSchema = boolean | Record<string, unknown>;

/** `off`: the schema is documentation only; `warn`: checked, violations recorded; `enforce`: refused. */
export const ENFORCEMENTS = ['off', 'warn', 'enforce'] as const;
export type Enforcement = (typeof ENFORCEMENTS)[number];

export function isEnforcement(value: unknown): value is Enforcement {
  return (ENFORCEMENTS as readonly unknown[]).includes(value);
}

/** A schema is at most 64 KB serialized: large enough for any message contract, small enough to hold many. */
export const SCHEMA_LIMIT_BYTES = 64 * 1024;

/** An example message stored with a version, shown in the Directory. */
export const EXAMPLE_LIMIT_BYTES = 64 * 1024;

/** At most this many violations are reported for one message (the rest are counted). */
export const MAX_REPORTED_ERRORS = 20;

export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** Formats a schema may name (those of ajv-formats); any other is refused rather than ignored. */
export const KNOWN_FORMATS = [
  'date',
  'time',
  'date-time',
  'iso-time',
  'iso-date-time',
  'duration',
  'uri',
  'uri-reference',
  'uri-template',
  'url',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'json-pointer-uri-fragment',
  'relative-json-pointer',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
] as const;

/** Where a schema (or a message) is wrong, and how. */
export interface SchemaProblem {
  /** JSON Pointer (RFC 6901) into the schema, or into the message for a violation. */
  pointer: string;
  message: string;
}

export function isSchemaObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** @example joinPointer('/properties', 'a/b') // '/properties/a~1b' */
export function joinPointer(pointer: string, ...tokens: string[]): string {
  return pointer + tokens.map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/** Keywords whose value is one subschema, an array of them, or a map of them (draft 2020-12). */
const ONE_SCHEMA = [
  'additionalProperties',
  'items',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
];
const SCHEMA_ARRAYS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

/**
 * Every subschema of `schema` with its pointer, the root first. Values of `enum`, `const`,
 * `default`, `examples` are data, not schemas: a `$ref` key inside them is not visited.
 */
export function* subschemas(schema: JsonSchema, pointer = ''): Generator<[Record<string, unknown>, string]> {
  if (!isSchemaObject(schema)) return;
  yield [schema, pointer];
  for (const keyword of ONE_SCHEMA) {
    if (keyword in schema) yield* subschemas(schema[keyword] as JsonSchema, joinPointer(pointer, keyword));
  }
  for (const keyword of SCHEMA_ARRAYS) {
    const list = schema[keyword];
    if (!Array.isArray(list)) continue;
    for (let i = 0; i < list.length; i++) {
      yield* subschemas(list[i] as JsonSchema, joinPointer(pointer, keyword, String(i)));
    }
  }
  for (const keyword of SCHEMA_MAPS) {
    const map = schema[keyword];
    if (!isSchemaObject(map)) continue;
    for (const [name, sub] of Object.entries(map)) {
      yield* subschemas(sub as JsonSchema, joinPointer(pointer, keyword, name));
    }
  }
}

/**
 * What Zekt refuses before a schema is compiled: another draft than 2020-12, a reference outside
 * the schema (Zekt never fetches one: a schema must be complete in itself), a format Zekt does not
 * check (it would be ignored silently). The first problem found, or null.
 *
 * @example localSchemaProblem({ $ref: 'https://example.com/s.json' })
 *   // { pointer: '/$ref', message: 'only local references (starting with #) are allowed; …' }
 */
export function localSchemaProblem(schema: unknown): SchemaProblem | null {
  if (!isSchemaObject(schema) && typeof schema !== 'boolean') {
    return { pointer: '', message: 'a schema is a JSON object (or true / false)' };
  }
  for (const [sub, pointer] of subschemas(schema)) {
    const draft = sub.$schema;
    if (draft !== undefined && draft !== DRAFT_2020_12 && draft !== `${DRAFT_2020_12}#`) {
      return {
        pointer: joinPointer(pointer, '$schema'),
        message: `only JSON Schema draft 2020-12 is accepted: set $schema to ${DRAFT_2020_12} or leave it out`,
      };
    }
    for (const keyword of ['$ref', '$dynamicRef']) {
      const ref = sub[keyword];
      if (ref === undefined) continue;
      if (typeof ref !== 'string' || !ref.startsWith('#')) {
        return {
          pointer: joinPointer(pointer, keyword),
          message: `only local references (starting with #, e.g. #/$defs/name) are allowed; ${JSON.stringify(ref)} is outside the schema and Zekt never fetches one: copy it under $defs`,
        };
      }
    }
    const format = sub.format;
    if (typeof format === 'string' && !(KNOWN_FORMATS as readonly string[]).includes(format)) {
      return {
        pointer: joinPointer(pointer, 'format'),
        message: `unknown format ${JSON.stringify(format)}; Zekt checks ${KNOWN_FORMATS.join(', ')}`,
      };
    }
  }
  return null;
}

/** A service's schema as one message is checked against it. */
export interface SchemaInForce {
  serviceId: string;
  slug: string;
  version: number;
  enforcement: Enforcement;
}

/** The check of one message against one schema: its violations (empty: valid), or timed out. */
export interface SchemaCheck extends SchemaInForce {
  errors: SchemaProblem[];
  /** How many violations there were in all (`errors` keeps the first MAX_REPORTED_ERRORS). */
  errorCount: number;
  /** Validation was stopped at its time bound: the message could not be shown to conform. */
  timedOut: boolean;
}

export type MessageVerdict =
  /** An enforced schema refused the message: nothing is stored. */
  | { outcome: 'refused'; check: SchemaCheck; refusedBy: SchemaCheck[] }
  | {
      outcome: 'accepted';
      /** Warn-mode checks the message failed: recorded with the run and counted. */
      violations: SchemaCheck[];
      /** The schema version each service checked the message against (its deliveries carry it). */
      versions: Record<string, number>;
    };

/**
 * What the checks of a message decide. Every service of the workflow whose schema is in force
 * checks the message, since the message goes to the subscribers of each: an enforced schema that
 * refuses it refuses the message for all (its step fails, nothing is stored), whatever the others
 * say. Checked services are listed in slug order, so the first refusal is the same every time.
 *
 * @example decideMessage([]) // { outcome: 'accepted', violations: [], versions: {} }
 */
export function decideMessage(checks: SchemaCheck[]): MessageVerdict {
  const failed = (c: SchemaCheck) => c.timedOut || c.errorCount > 0;
  const ordered = [...checks].sort((a, b) => a.slug.localeCompare(b.slug));
  const refusedBy = ordered.filter((c) => c.enforcement === 'enforce' && failed(c));
  if (refusedBy.length > 0) return { outcome: 'refused', check: refusedBy[0]!, refusedBy };
  return {
    outcome: 'accepted',
    violations: ordered.filter((c) => c.enforcement === 'warn' && failed(c)),
    versions: Object.fromEntries(ordered.map((c) => [c.serviceId, c.version])),
  };
}

/** The first MAX_REPORTED_ERRORS problems, and how many there were. */
export function reportedErrors(errors: SchemaProblem[]): { errors: SchemaProblem[]; errorCount: number } {
  return { errors: errors.slice(0, MAX_REPORTED_ERRORS), errorCount: errors.length };
}

/** A run sent no message: it is checked as if its message were `null`. */
export const MISSING_MESSAGE_PROBLEM: SchemaProblem = {
  pointer: '',
  message:
    'the run sent no message, and the schema does not accept null: send one with the message action, or allow null ("type": ["object", "null"]) to make it optional',
};
