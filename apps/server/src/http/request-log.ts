import type { FastifyRequest } from 'fastify';

/**
 * What a request log line says about the request: never its query string.
 * OAuth callbacks carry `code` and `state` there, and callers put tokens there however often they
 * are told not to; the path and method are enough to follow a request.
 */
export function requestForLog(request: FastifyRequest) {
  return {
    method: request.method,
    url: (request.url ?? '').split('?')[0],
    host: request.host,
    remoteAddress: request.ip,
  };
}
