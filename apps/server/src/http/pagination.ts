import Type from 'typebox';
import type { KeysetPage } from '../store/page.js';
import { HttpError } from './problem.js';

/** Every list answers at most this many items per page (SPEC 9). */
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
 * The page a list query asks for. The cursor is opaque to callers: the key of the last row shown,
 * as base64url JSON. The store is asked for one row more than the page holds.
 */
export function readPage(
  query: { limit?: string | undefined; cursor?: string | undefined },
  keyParts: number,
) {
  const limit = readLimit(query.limit);
  const store: KeysetPage = { limit: limit + 1, after: decodeCursor(query.cursor, keyParts) };
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

function decodeCursor(cursor: string | undefined, keyParts: number): string[] | undefined {
  if (cursor === undefined) return undefined;
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  if (!Array.isArray(key) || key.length !== keyParts || !key.every((part) => typeof part === 'string')) {
    throw new HttpError('invalid_cursor', 'cursor must be the nextCursor of a previous page, unchanged');
  }
  return key as string[];
}
