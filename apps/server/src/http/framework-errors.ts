import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, rawProblem, sendProblem, toHttpError } from './problem.js';

/**
 * Problems for the errors Fastify and Node meet before a route runs, which they would otherwise
 * answer in their own JSON: a path that is not valid percent-encoding, a path
 * parameter longer than the router takes, and the raw socket errors Node hands to
 * `clientError` — a request that is not HTTP, headers too large, a request that took too long.
 */
export function frameworkErrorProblem(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return sendProblem(
        reply,
        new HttpError('invalid_request', 'the path is not valid percent-encoding (e.g. a lone %ff)'),
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return sendProblem(
        reply,
        new HttpError('uri_too_long', 'a path parameter is longer than 100 characters'),
      );
    default:
      return sendProblem(reply, toHttpError(error));
  }
}

/** Fastify's `clientErrorHandler`: the socket has no request object, so the problem is written raw. */
export function clientErrorProblem(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const problem =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new HttpError('request_timeout', 'the request did not arrive in time (ZEKT_REQUEST_TIMEOUT_MS)')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new HttpError('headers_too_large', 'the request headers are larger than 16 KB')
        : new HttpError('invalid_request', 'the request is not well-formed HTTP/1.1');
  const { status, headers, body } = rawProblem(problem, { connection: 'close' });
  if (socket.writable) {
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 ${status} ${problem.toProblem().title}\r\n${head}\r\n${body}`);
  } else {
    socket.destroy();
  }
}

/**
 * While the server shuts down, requests still arriving on open connections get a problem (503,
 * `Retry-After`, the connection closed) instead of Fastify's own JSON 503.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw new HttpError(
      'server_unavailable',
      'this server is shutting down; retry shortly',
      {},
      {
        headers: { 'retry-after': '1' },
      },
    );
  });
}
