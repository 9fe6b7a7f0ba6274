import Type from 'typebox';
import type { IdPrefix } from '../domain/ids.js';
import type { KeysetPage } from '../store/page.js';
import { HttpError } from './problem.js';

/** Every list answers at most this many items per page. */
export const MAX_PAGE = 100;
const DEFAULT_PAGE = 50;

/** The query parameters of every list. */
export const PageQuery = {
  limit: Type.Optional(Type.String({ description: `1–${MAX_PAGE} (default ${DEFAULT_PAGE})` })),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
};

export function readLimit(limit: string | undefined): number {
  const size = limit === undefined ? DEFAULT_PAGE : Number(limit);
  if (!/^\d+$/.test(limit ?? '1') || !Number.isInteger(size) || size < 1 || size > MAX_PAGE) {
    throw new HttpError('invalid_request', `limit must be a whole number from 1 to ${MAX_PAGE}`);
  }
  return size;
}

/**
 * What one field of a cursor may hold, as its list's key column holds it. A cursor is the caller's
 * input like any other: decoded, every field is checked against its kind before a query sees it,
 * so a forged one is a 400 on both stores — never a value PostgreSQL refuses (a time that is not a
 * whole number of milliseconds, or beyond its bigint; a NUL character in text) and answers 500.
 */
export type CursorField = (value: string) => boolean;

/** The longest name a cursor carries (repository full names, workflow paths, slugs are shorter). */
const MAX_NAME = 1024;

export const CURSOR_FIELDS = {
  /** A `*_at` column: Unix epoch milliseconds, a whole number JavaScript and bigint hold exactly. */
  time: ((value) => /^\d{1,16}$/.test(value) && Number.isSafeInteger(Number(value))) as CursorField,
  /** An id `newId(prefix)` made. */
  id: (prefix: IdPrefix): CursorField => {
    const pattern = new RegExp(`^${prefix}_[0-9a-f]{32}$`);
    return (value) => pattern.test(value);
  },
  /** A small whole number counted from 1 (a schema version). */
  ordinal: ((value) => /^[1-9]\d{0,8}$/.test(value)) as CursorField,
  /** A name (repository, workflow path, slug): text without control characters. */
  name: ((value) => value.length > 0 && value.length <= MAX_NAME && !/\p{Cc}/u.test(value)) as CursorField,
};

/**
 * The page a list query asks for. The cursor is opaque to callers: the key of the last row shown,
 * as base64url JSON, one field per entry of `fields`. The store is asked for one row more than the
 * page holds.
 */
export function readPage(
  query: { limit?: string | undefined; cursor?: string | undefined },
  fields: readonly CursorField[],
) {
  const limit = readLimit(query.limit);
  const store: KeysetPage = { limit: limit + 1, after: decodeCursor(query.cursor, fields) };
  return { limit, store };
}

/** The rows of the page and the cursor of the next one. */
export function pageOf<T>(
  rows: T[],
  limit: number,
  key: (row: T) => string[],
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items,
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(key(last)) : null,
  };
}

function encodeCursor(key: string[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function decodeCursor(cursor: string | undefined, fields: readonly CursorField[]): string[] | undefined {
  if (cursor === undefined) return undefined;
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  if (
    !Array.isArray(key) ||
    key.length !== fields.length ||
    !key.every((part, i) => typeof part === 'string' && fields[i]!(part))
  ) {
    throw new HttpError('invalid_cursor', 'cursor must be the nextCursor of a previous page, unchanged');
  }
  return key as string[];
}
