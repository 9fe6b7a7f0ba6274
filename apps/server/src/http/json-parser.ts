import type { FastifyInstance } from 'fastify';
import { containersDeeperThan, tooDeepToParse } from '../domain/bounded-json.js';
import { HttpError } from './problem.js';

/**
 * The only body format of the API is JSON: Fastify's `text/plain`
 * parser goes, so a text body is a 415 as docs/api.md says, and JSON nested deeper than
 * `maxDepth` is refused before it is parsed. Fastify's own parser (with its `__proto__` check)
 * does the parsing.
 */
export function acceptOnlyBoundedJson(app: FastifyInstance, maxDepth: number): void {
  const parse = app.getDefaultJsonParser('error', 'ignore');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (tooDeepToParse(body as string, maxDepth)) {
      done(tooDeep(maxDepth), undefined);
      return;
    }
    parse(request, body as string, (error, value) => {
      if (!error && containersDeeperThan(value, maxDepth)) done(tooDeep(maxDepth), undefined);
      else done(error, value);
    });
  });
}

export function tooDeep(maxDepth: number): HttpError {
  return new HttpError(
    'json_too_deep',
    `the JSON nests arrays and objects more than ${maxDepth} levels deep (ZEKT_MAX_JSON_DEPTH); flatten it`,
  );
}
