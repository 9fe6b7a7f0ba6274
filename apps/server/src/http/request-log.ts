import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

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

/**
 * One access line per request at `info`, when it is answered: its method, path, status and time
 * together, as an access log has them. Fastify's default is two lines (`incoming request` when it
 * arrives, `request completed` without the path when it is answered); building and redacting the
 * second line was 4 % of the API process's CPU under `zekt bench` (docs/performance.md). The
 * arrival line is still written at `debug`, for following a request that never gets an answer.
 */
export class AccessLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) {
      reply.log.error(
        { req: request, res: reply, err: error, responseTime: reply.elapsedTime },
        'request errored',
      );
    } else {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}
