import { useEffect, useState } from 'react';
import type { Answer } from '../api/client';
import { Table } from '../components/table';

export type SchemaVersion = Answer<'/api/v1/services/{id}/schema', 'get'>;

/** One row of the readable field table: a property of the message, where it is, what it holds. */
interface FieldRow {
  path: string;
  type: string;
  required: boolean;
  notes: string;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The local definition a `$ref` names (`#/$defs/x`), so the table shows what it stands for. */
function resolve(root: Json, schema: unknown, depth: number): Json {
  if (!isObject(schema)) return {};
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/') || depth > 8) return schema;
  let target: unknown = root;
  for (const token of ref.slice(2).split('/')) {
    target = isObject(target) ? target[token.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
  }
  return resolve(root, target, depth + 1);
}

function typeOf(schema: Json): string {
  if ('const' in schema) return `= ${JSON.stringify(schema.const)}`;
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  const type = schema.type;
  if (Array.isArray(type)) return type.join(' | ');
  if (typeof type === 'string')
    return type === 'array' && isObject(schema.items) ? `${typeOf(schema.items)}[]` : type;
  if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) return 'one of several shapes';
  return 'any';
}

function notesOf(schema: Json): string {
  const notes: string[] = [];
  if (typeof schema.description === 'string') notes.push(schema.description);
  if (typeof schema.format === 'string') notes.push(`format ${schema.format}`);
  if (typeof schema.pattern === 'string') notes.push(`matches ${schema.pattern}`);
  for (const [keyword, label] of [
    ['minLength', 'at least %s characters'],
    ['maxLength', 'at most %s characters'],
    ['minimum', '≥ %s'],
    ['maximum', '≤ %s'],
    ['minItems', 'at least %s items'],
    ['maxItems', 'at most %s items'],
  ] as const) {
    if (typeof schema[keyword] === 'number') notes.push(label.replace('%s', String(schema[keyword])));
  }
  return notes.join('; ');
}

/** The message's properties, depth first, as rows (`/deploy/environment`). */
export function fieldRows(root: unknown): FieldRow[] {
  const rows: FieldRow[] = [];
  if (!isObject(root)) return rows;
  const walk = (schema: Json, path: string, depth: number) => {
    if (depth > 6) return;
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const properties = isObject(schema.properties) ? schema.properties : {};
    for (const [name, raw] of Object.entries(properties)) {
      const property = resolve(root, raw, 0);
      const at = `${path}/${name}`;
      rows.push({ path: at, type: typeOf(property), required: required.has(name), notes: notesOf(property) });
      walk(property, at, depth + 1);
      if (isObject(property.items)) walk(resolve(root, property.items, 0), `${at}/[]`, depth + 1);
    }
  };
  walk(resolve(root, root, 0), '', 0);
  return rows;
}

/** A service's schema for people: a field table, the example, and the schema itself to download. */
export function SchemaFields({ version, slug }: { version: SchemaVersion; slug: string }) {
  const rows = fieldRows(version.schema);
  const [href, setHref] = useState<string | null>(null);
  useEffect(() => {
    const url = URL.createObjectURL(
      new Blob([`${JSON.stringify(version.schema, null, 2)}\n`], { type: 'application/schema+json' }),
    );
    setHref(url);
    return () => URL.revokeObjectURL(url);
  }, [version.schema]);
  return (
    <div className="schema-fields">
      {rows.length === 0 ? (
        <p className="muted">The schema names no properties; read it below.</p>
      ) : (
        <Table
          label={`Message fields of ${slug}`}
          rows={rows}
          rowKey={(row) => row.path}
          columns={[
            { header: 'Field', rowHeader: true, cell: (row) => <code>{row.path}</code> },
            { header: 'Type', cell: (row) => row.type },
            { header: 'Required', cell: (row) => (row.required ? 'Required' : 'Optional') },
            { header: 'Notes', cell: (row) => row.notes },
          ]}
        />
      )}
      <p className="small">
        {version.requiresMessage
          ? 'Every run sends a message.'
          : 'A run may send no message (the schema accepts null).'}{' '}
        {href ? (
          <a href={href} download={`${slug}.schema.v${version.version}.json`}>
            Download the schema (version {version.version})
          </a>
        ) : null}
      </p>
      {version.example !== null && version.example !== undefined ? (
        <>
          <h3>Example message</h3>
          <pre className="json">{JSON.stringify(version.example, null, 2)}</pre>
        </>
      ) : null}
      <details>
        <summary>JSON Schema</summary>
        <pre className="json">{JSON.stringify(version.schema, null, 2)}</pre>
      </details>
    </div>
  );
}

/** What each enforcement means, in the words the console uses everywhere. */
export const ENFORCEMENT_LABELS: Record<string, string> = {
  off: 'Off — documentation only',
  warn: 'Warn — accepted, violations recorded',
  enforce: 'Enforce — messages that do not match are refused',
};
