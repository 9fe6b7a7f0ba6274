import type { FastifyRequest } from 'fastify';
import { problemsParsingJson } from '../github-error.js';

/**
 * The request body as JSON. The API plugin keeps bodies as text so that malformed JSON gets
 * GitHub's 400 `Problems parsing JSON` instead of a framework error. Empty body → undefined.
 */
export function jsonBody(request: FastifyRequest, documentationUrl: string): unknown {
  const raw = request.body;
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') return raw;
  if (raw.trim() === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw problemsParsingJson(documentationUrl);
  }
}

/** A positive integer path parameter, or null (the route then answers 404). */
export function idParam(value: string): number | null {
  return /^\d{1,16}$/.test(value) ? Number(value) : null;
}
