import { isSchemaObject, type JsonSchema, joinPointer } from './message-schema.js';

/**
 * Whether a new version of a service's message schema breaks what consumers rely on. A change is
 * breaking when the new version removes or narrows what the previous one described: a property
 * removed, a property newly required, a type narrowed, an enum (or const) narrowed, extra
 * properties closed, a length, size or numeric bound tightened. Widening changes are reported
 * too, as not breaking. Subschemas are compared where both versions have them at the same place
 * (`properties`, `items`, `prefixItems`, `additionalProperties`, `$defs`); `$ref`s are compared as
 * the definitions they name under `$defs`, not followed.
 */
export interface SchemaChange {
  /** JSON Pointer into the schema (the new version's, or the old one's for what was removed). */
  pointer: string;
  kind:
    | 'property_removed'
    | 'property_added'
    | 'required_added'
    | 'required_removed'
    | 'type_narrowed'
    | 'type_widened'
    | 'enum_narrowed'
    | 'enum_widened'
    | 'additional_properties_closed'
    | 'additional_properties_opened'
    | 'bound_tightened'
    | 'bound_loosened';
  breaking: boolean;
  message: string;
}

export interface CompatibilityReport {
  /** The version compared with; null for a service's first schema. */
  previousVersion: number | null;
  breaking: boolean;
  changes: SchemaChange[];
}

const JSON_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'] as const;

/** Bounds whose larger value accepts less (minimum-like) or more (maximum-like). */
const LOWER_BOUNDS = ['minLength', 'minItems', 'minProperties', 'minimum', 'exclusiveMinimum', 'minContains'];
const UPPER_BOUNDS = ['maxLength', 'maxItems', 'maxProperties', 'maximum', 'exclusiveMaximum', 'maxContains'];

/**
 * @example compareSchemas({ properties: { a: {} } }, {}, 1).breaking // true: /properties/a removed
 */
export function compareSchemas(
  previous: JsonSchema,
  next: JsonSchema,
  previousVersion: number | null,
): CompatibilityReport {
  const changes: SchemaChange[] = [];
  compareAt(previous, next, '', changes);
  return { previousVersion, breaking: changes.some((c) => c.breaking), changes };
}

/** The report of a service's first schema: nothing to compare with. */
export function firstSchemaReport(): CompatibilityReport {
  return { previousVersion: null, breaking: false, changes: [] };
}

function compareAt(previous: JsonSchema, next: JsonSchema, pointer: string, changes: SchemaChange[]): void {
  if (previous === next) return;
  // `true` (or {}) accepts anything, `false` nothing.
  if (next === false && previous !== false) {
    changes.push({
      pointer,
      kind: 'type_narrowed',
      breaking: true,
      message: `${where(pointer)} now accepts nothing (false)`,
    });
    return;
  }
  const before = isSchemaObject(previous) ? previous : {};
  const after = isSchemaObject(next) ? next : {};
  compareTypes(before, after, pointer, changes);
  compareEnums(before, after, pointer, changes);
  compareBounds(before, after, pointer, changes);
  compareProperties(before, after, pointer, changes);
  compareRequired(before, after, pointer, changes);
  compareAdditionalProperties(before, after, pointer, changes);
  for (const keyword of ['items', 'additionalProperties', 'contains', 'propertyNames']) {
    // `additionalProperties: false` on either side is compareAdditionalProperties' to report.
    if (!isSchemaObject(before[keyword]) || !isSchemaObject(after[keyword])) continue;
    compareAt(
      before[keyword] as JsonSchema,
      after[keyword] as JsonSchema,
      joinPointer(pointer, keyword),
      changes,
    );
  }
  const beforeItems = Array.isArray(before.prefixItems) ? (before.prefixItems as JsonSchema[]) : [];
  const afterItems = Array.isArray(after.prefixItems) ? (after.prefixItems as JsonSchema[]) : [];
  for (let i = 0; i < Math.min(beforeItems.length, afterItems.length); i++) {
    compareAt(beforeItems[i]!, afterItems[i]!, joinPointer(pointer, 'prefixItems', String(i)), changes);
  }
  const beforeDefs = mapOf(before.$defs);
  const afterDefs = mapOf(after.$defs);
  for (const [name, schema] of Object.entries(afterDefs)) {
    if (name in beforeDefs)
      compareAt(beforeDefs[name]!, schema, joinPointer(pointer, '$defs', name), changes);
  }
}

/** The JSON types a schema accepts; null when `type` is absent (all of them). */
function typesOf(schema: Record<string, unknown>): Set<string> | null {
  const type = schema.type;
  if (type === undefined) return null;
  const names = (Array.isArray(type) ? type : [type]).filter((t): t is string => typeof t === 'string');
  return new Set(names);
}

/** An integer is a number: `number` accepts every integer. */
function accepts(types: Set<string> | null, type: string): boolean {
  if (types === null) return true;
  return types.has(type) || (type === 'integer' && types.has('number'));
}

function compareTypes(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  pointer: string,
  changes: SchemaChange[],
): void {
  const old = typesOf(before);
  const now = typesOf(after);
  const lost = JSON_TYPES.filter((t) => accepts(old, t) && !accepts(now, t));
  const gained = JSON_TYPES.filter((t) => !accepts(old, t) && accepts(now, t));
  if (lost.length > 0) {
    changes.push({
      pointer: joinPointer(pointer, 'type'),
      kind: 'type_narrowed',
      breaking: true,
      message: `${where(pointer)} no longer accepts ${lost.join(', ')} (type ${describeType(old)} → ${describeType(now)})`,
    });
  } else if (gained.length > 0) {
    changes.push({
      pointer: joinPointer(pointer, 'type'),
      kind: 'type_widened',
      breaking: false,
      message: `${where(pointer)} also accepts ${gained.join(', ')} (type ${describeType(old)} → ${describeType(now)})`,
    });
  }
}

function describeType(types: Set<string> | null): string {
  return types === null ? 'any' : [...types].join(' | ');
}

/** The values `enum` and `const` allow, as JSON texts; null when neither is given (any value). */
function allowedValues(schema: Record<string, unknown>): Map<string, unknown> | null {
  let values: Map<string, unknown> | null = null;
  if (Array.isArray(schema.enum)) values = new Map(schema.enum.map((v) => [canonicalJson(v), v]));
  if ('const' in schema) {
    const key = canonicalJson(schema.const);
    values = values === null || values.has(key) ? new Map([[key, schema.const]]) : new Map();
  }
  return values;
}

function compareEnums(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  pointer: string,
  changes: SchemaChange[],
): void {
  const old = allowedValues(before);
  const now = allowedValues(after);
  const at = joinPointer(pointer, 'enum' in after || !('const' in after) ? 'enum' : 'const');
  if (now !== null && old === null) {
    changes.push({
      pointer: at,
      kind: 'enum_narrowed',
      breaking: true,
      message: `${where(pointer)} is now limited to ${list([...now.keys()])}`,
    });
    return;
  }
  if (now === null || old === null) {
    if (now === null && old !== null) {
      changes.push({
        pointer: joinPointer(pointer, 'enum' in before ? 'enum' : 'const'),
        kind: 'enum_widened',
        breaking: false,
        message: `${where(pointer)} is no longer limited to a list of values`,
      });
    }
    return;
  }
  const removed = [...old.keys()].filter((k) => !now.has(k));
  const added = [...now.keys()].filter((k) => !old.has(k));
  if (removed.length > 0) {
    changes.push({
      pointer: at,
      kind: 'enum_narrowed',
      breaking: true,
      message: `${where(pointer)} no longer allows ${list(removed)}`,
    });
  } else if (added.length > 0) {
    changes.push({
      pointer: at,
      kind: 'enum_widened',
      breaking: false,
      message: `${where(pointer)} also allows ${list(added)}`,
    });
  }
}

function compareBounds(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  pointer: string,
  changes: SchemaChange[],
): void {
  for (const keyword of [...LOWER_BOUNDS, ...UPPER_BOUNDS]) {
    const old = typeof before[keyword] === 'number' ? (before[keyword] as number) : undefined;
    const now = typeof after[keyword] === 'number' ? (after[keyword] as number) : undefined;
    if (old === now || (old === undefined && now === undefined)) continue;
    const lower = LOWER_BOUNDS.includes(keyword);
    const tightened = now !== undefined && (old === undefined || (lower ? now > old : now < old));
    changes.push({
      pointer: joinPointer(pointer, keyword),
      kind: tightened ? 'bound_tightened' : 'bound_loosened',
      breaking: tightened,
      message: `${where(pointer)}: ${keyword} ${old ?? 'none'} → ${now ?? 'none'}`,
    });
  }
}

function compareProperties(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  pointer: string,
  changes: SchemaChange[],
): void {
  const old = mapOf(before.properties);
  const now = mapOf(after.properties);
  for (const [name, schema] of Object.entries(old)) {
    const at = joinPointer(pointer, 'properties', name);
    if (!(name in now)) {
      changes.push({
        pointer: at,
        kind: 'property_removed',
        breaking: true,
        message: `property ${quote(name)} of ${where(pointer)} was removed`,
      });
      continue;
    }
    compareAt(schema, now[name]!, at, changes);
  }
  for (const name of Object.keys(now)) {
    if (name in old) continue;
    changes.push({
      pointer: joinPointer(pointer, 'properties', name),
      kind: 'property_added',
      breaking: false,
      message: `property ${quote(name)} was added to ${where(pointer)}`,
    });
  }
}

function compareRequired(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  pointer: string,
  changes: SchemaChange[],
): void {
  const old = new Set(stringsOf(before.required));
  const now = new Set(stringsOf(after.required));
  for (const name of now) {
    if (old.has(name)) continue;
    changes.push({
      pointer: joinPointer(pointer, 'required'),
      kind: 'required_added',
      breaking: true,
      message: `property ${quote(name)} of ${where(pointer)} is now required`,
    });
  }
  for (const name of old) {
    if (now.has(name)) continue;
    changes.push({
      pointer: joinPointer(pointer, 'required'),
      kind: 'required_removed',
      breaking: false,
      message: `property ${quote(name)} of ${where(pointer)} is no longer required`,
    });
  }
}

function compareAdditionalProperties(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  pointer: string,
  changes: SchemaChange[],
): void {
  const closed = (schema: Record<string, unknown>) => schema.additionalProperties === false;
  if (closed(after) && !closed(before)) {
    changes.push({
      pointer: joinPointer(pointer, 'additionalProperties'),
      kind: 'additional_properties_closed',
      breaking: true,
      message: `${where(pointer)} no longer accepts properties it does not list`,
    });
  } else if (closed(before) && !closed(after)) {
    changes.push({
      pointer: joinPointer(pointer, 'additionalProperties'),
      kind: 'additional_properties_opened',
      breaking: false,
      message: `${where(pointer)} now accepts properties it does not list`,
    });
  }
}

function mapOf(value: unknown): Record<string, JsonSchema> {
  if (!isSchemaObject(value)) return {};
  const map: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(value)) {
    if (typeof schema === 'boolean' || isSchemaObject(schema)) map[name] = schema;
  }
  return map;
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function where(pointer: string): string {
  return pointer === '' ? 'the message' : pointer;
}

function quote(name: string): string {
  return JSON.stringify(name);
}

function list(values: string[]): string {
  const shown = values.slice(0, 10).join(', ');
  return values.length > 10 ? `${shown} and ${values.length - 10} more` : shown;
}

/** JSON with object keys sorted, so equal values compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}
