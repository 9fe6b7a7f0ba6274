import { type JsonSchema, joinPointer, type SchemaProblem, subschemas } from '../domain/message-schema.js';

/**
 * What a schema-check thread's answers mean for people: Ajv's errors as `{ pointer, message }`
 * (the pointer into the message, or into the schema for a schema that does not compile).
 */

/** An Ajv error as the thread sends it. */
export interface RawViolation {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message: string;
}

/** Why a schema did not compile, as the thread sends it. */
export type RawCompileProblem =
  | { kind: 'meta'; errors: Array<{ instancePath: string; message: string }> }
  | { kind: 'pattern'; pattern: string; message: string }
  | { kind: 'ref'; ref: string; message: string }
  | { kind: 'other'; message: string };

/**
 * One violation: the pointer names the value at fault (a missing or unexpected property itself,
 * not its parent object).
 *
 * @example violationOf({ instancePath: '', keyword: 'required', params: { missingProperty: 'version' }, message: '…' })
 *   // { pointer: '/version', message: 'is required' }
 */
export function violationOf(raw: RawViolation): SchemaProblem {
  const params = raw.params ?? {};
  if (raw.keyword === 'required' && typeof params.missingProperty === 'string') {
    return { pointer: joinPointer(raw.instancePath, params.missingProperty), message: 'is required' };
  }
  if (raw.keyword === 'dependentRequired' && typeof params.missingProperty === 'string') {
    return {
      pointer: joinPointer(raw.instancePath, params.missingProperty),
      message: `is required with ${String(params.property)}`,
    };
  }
  if (raw.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return {
      pointer: joinPointer(raw.instancePath, params.additionalProperty),
      message: 'is not a property the schema allows',
    };
  }
  if (raw.keyword === 'unevaluatedProperties' && typeof params.unevaluatedProperty === 'string') {
    return {
      pointer: joinPointer(raw.instancePath, params.unevaluatedProperty),
      message: 'is not a property the schema allows',
    };
  }
  if (raw.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    const values = params.allowedValues.slice(0, 10).map((v) => JSON.stringify(v));
    return {
      pointer: raw.instancePath,
      message: `must be one of ${values.join(', ')}${params.allowedValues.length > 10 ? ', …' : ''}`,
    };
  }
  return { pointer: raw.instancePath, message: raw.message };
}

/** Where a schema that does not compile is wrong (a pointer into the schema). */
export function compileProblemOf(problem: RawCompileProblem, schema: JsonSchema): SchemaProblem {
  switch (problem.kind) {
    case 'meta': {
      // Ajv lists a failed `anyOf` of the meta-schema with each branch: the deepest error is the
      // one that names the keyword at fault.
      const deepest = [...problem.errors].sort(
        (a, b) => b.instancePath.split('/').length - a.instancePath.split('/').length,
      )[0];
      return {
        pointer: deepest?.instancePath ?? '',
        message: `not valid JSON Schema draft 2020-12: ${deepest?.message ?? 'the schema is not valid'}`,
      };
    }
    case 'pattern':
      return {
        pointer: patternPointer(schema, problem.pattern),
        message: `pattern ${JSON.stringify(problem.pattern)} cannot be used (${problem.message}): Zekt matches patterns with a linear-time engine (RE2), which has no lookaround and no backreferences`,
      };
    case 'ref':
      return {
        pointer: refPointer(schema, problem.ref),
        message: `$ref ${JSON.stringify(problem.ref)} names nothing in this schema: define it under $defs`,
      };
    case 'other':
      return { pointer: '', message: `the schema does not compile: ${problem.message}` };
  }
}

function patternPointer(schema: JsonSchema, pattern: string): string {
  for (const [sub, pointer] of subschemas(schema)) {
    if (sub.pattern === pattern) return joinPointer(pointer, 'pattern');
    const map = sub.patternProperties;
    if (typeof map === 'object' && map !== null && pattern in map) {
      return joinPointer(pointer, 'patternProperties', pattern);
    }
  }
  return '';
}

function refPointer(schema: JsonSchema, ref: string): string {
  for (const [sub, pointer] of subschemas(schema)) {
    for (const keyword of ['$ref', '$dynamicRef']) {
      const value = sub[keyword];
      if (typeof value === 'string' && (value === ref || ref.endsWith(value))) {
        return joinPointer(pointer, keyword);
      }
    }
  }
  return '';
}
