import type { FastifyInstance } from 'fastify';
import { HttpError } from './problem.js';

/**
 * No name, id, query or field of the API holds a NUL character, and PostgreSQL cannot store one in
 * text (found by fuzzing: `%00` in a path answered 500 on PostgreSQL, 404 on SQLite). Refusing
 * them up front keeps both stores answering alike. A message's `payload` is exempt: it is any
 * JSON, stored as JSON text, where a NUL is an escape like any other.
 */
const FREE_JSON_ROUTES = new Set(['/api/events/receive', '/webhooks/github']);

function holdsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 100 || value === null || typeof value !== 'object') return false;
  for (const [key, inner] of Object.entries(value)) {
    if (key.includes('\u0000') || holdsNul(inner, depth + 1)) return true;
  }
  return false;
}

export function refuseNulCharacters(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const where = holdsNul(request.params)
      ? 'the path'
      : holdsNul(request.query)
        ? 'the query string'
        : !FREE_JSON_ROUTES.has(request.routeOptions.url ?? '') && holdsNul(request.body)
          ? 'the body'
          : null;
    if (where) throw new HttpError('invalid_request', `${where} holds a NUL character (\\u0000)`);
  });
}
