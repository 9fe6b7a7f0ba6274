import { describe, expect, it } from 'vitest';
import type { JsonSchema } from './message-schema.js';
import { compareSchemas, firstSchemaReport } from './schema-compatibility.js';

/** The compatibility rules, one at a time: each breaking rule, and its widening counterpart. */
const kinds = (previous: JsonSchema, next: JsonSchema) =>
  compareSchemas(previous, next, 1).changes.map((c) => [c.kind, c.pointer, c.breaking]);

describe('schema compatibility', () => {
  it('reports nothing between equal schemas, and a first schema as not breaking', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
    expect(compareSchemas(schema, structuredClone(schema), 3)).toEqual({
      previousVersion: 3,
      breaking: false,
      changes: [],
    });
    expect(firstSchemaReport()).toEqual({ previousVersion: null, breaking: false, changes: [] });
  });

  it('removing a property is breaking; adding one is not', () => {
    expect(kinds({ properties: { a: {}, b: {} } }, { properties: { a: {} } })).toEqual([
      ['property_removed', '/properties/b', true],
    ]);
    expect(kinds({ properties: { a: {} } }, { properties: { a: {}, c: {} } })).toEqual([
      ['property_added', '/properties/c', false],
    ]);
  });

  it('requiring a property is breaking; no longer requiring one is not', () => {
    expect(kinds({ required: ['a'] }, { required: ['a', 'b'] })).toEqual([
      ['required_added', '/required', true],
    ]);
    expect(kinds({ required: ['a', 'b'] }, { required: ['a'] })).toEqual([
      ['required_removed', '/required', false],
    ]);
  });

  it('narrowing a type is breaking, integer included in number; widening is not', () => {
    expect(kinds({ type: ['string', 'null'] }, { type: 'string' })).toEqual([
      ['type_narrowed', '/type', true],
    ]);
    expect(kinds({ type: 'number' }, { type: 'integer' })).toEqual([['type_narrowed', '/type', true]]);
    expect(kinds({}, { type: 'object' })).toEqual([['type_narrowed', '/type', true]]);
    expect(kinds({ type: 'integer' }, { type: 'number' })).toEqual([['type_widened', '/type', false]]);
    expect(kinds({ type: 'string' }, { type: ['string', 'null'] })).toEqual([
      ['type_widened', '/type', false],
    ]);
    expect(kinds({ type: 'string' }, false)).toEqual([['type_narrowed', '', true]]);
  });

  it('narrowing an enum (or const) is breaking; widening it is not', () => {
    expect(kinds({ enum: ['a', 'b'] }, { enum: ['a'] })).toEqual([['enum_narrowed', '/enum', true]]);
    expect(kinds({ type: 'string' }, { type: 'string', enum: ['a'] })).toEqual([
      ['enum_narrowed', '/enum', true],
    ]);
    expect(kinds({ enum: ['a', 'b'] }, { const: 'a' })).toEqual([['enum_narrowed', '/const', true]]);
    expect(kinds({ enum: ['a'] }, { enum: ['b', 'a'] })).toEqual([['enum_widened', '/enum', false]]);
    expect(kinds({ enum: ['a'] }, {})).toEqual([['enum_widened', '/enum', false]]);
    // Object values compare by content, whatever their key order.
    expect(kinds({ enum: [{ x: 1, y: 2 }] }, { enum: [{ y: 2, x: 1 }] })).toEqual([]);
  });

  it('closing extra properties and tightening bounds are breaking; the reverse is not', () => {
    expect(kinds({}, { additionalProperties: false })).toEqual([
      ['additional_properties_closed', '/additionalProperties', true],
    ]);
    expect(kinds({ additionalProperties: false }, {})).toEqual([
      ['additional_properties_opened', '/additionalProperties', false],
    ]);
    expect(kinds({ maxLength: 10 }, { maxLength: 5 })).toEqual([['bound_tightened', '/maxLength', true]]);
    expect(kinds({}, { minimum: 0 })).toEqual([['bound_tightened', '/minimum', true]]);
    expect(kinds({ minItems: 2 }, { minItems: 1 })).toEqual([['bound_loosened', '/minItems', false]]);
    expect(kinds({ maximum: 5 }, {})).toEqual([['bound_loosened', '/maximum', false]]);
  });

  it('looks into nested properties, items, prefixItems and $defs, with their pointers', () => {
    const before = {
      type: 'object',
      properties: {
        deploy: {
          type: 'object',
          properties: { env: { enum: ['staging', 'production'] }, url: { type: 'string' } },
        },
        tags: { type: 'array', items: { type: 'string' } },
        pair: { prefixItems: [{ type: 'string' }, { type: 'number' }] },
      },
      $defs: { id: { type: ['string', 'integer'] } },
    };
    const after = {
      type: 'object',
      properties: {
        deploy: { type: 'object', properties: { env: { enum: ['production'] } }, required: ['env'] },
        tags: { type: 'array', items: { type: 'integer' } },
        pair: { prefixItems: [{ type: 'string' }, { type: 'integer' }] },
      },
      $defs: { id: { type: 'string' } },
    };
    const report = compareSchemas(before, after, 4);
    expect(report.breaking).toBe(true);
    expect(report.changes.map((c) => [c.kind, c.pointer])).toEqual([
      ['enum_narrowed', '/properties/deploy/properties/env/enum'],
      ['property_removed', '/properties/deploy/properties/url'],
      ['required_added', '/properties/deploy/required'],
      ['type_narrowed', '/properties/tags/items/type'],
      ['type_narrowed', '/properties/pair/prefixItems/1/type'],
      ['type_narrowed', '/$defs/id/type'],
    ]);
    expect(report.changes[1]!.message).toBe('property "url" of /properties/deploy was removed');
  });

  it('escapes names in pointers (RFC 6901)', () => {
    expect(kinds({ properties: { 'a/b~c': {} } }, { properties: {} })).toEqual([
      ['property_removed', '/properties/a~1b~0c', true],
    ]);
  });
});
