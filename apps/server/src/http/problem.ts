import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { isStoreUnavailable } from '../store/store-errors.js';

import { PROBLEMS, type ProblemCode } from './problem-codes.js';

/**
 * Every error Zekt answers is `application/problem+json` (RFC 9457) with a stable `code` clients
 * can branch on (problem-codes.ts has them all). The `detail` tells the caller how to fix the problem.
 */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  [extension: string]: unknown;
}

export const PROBLEM_TYPE_BASE = 'https://zekt.dev/problems/';

/** The one HTTP error type. Throw it from a handler; the error handler renders it. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: number;
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extensions: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.status = PROBLEMS[code].status;
  }

  toProblem(): Problem {
    return {
      type: PROBLEM_TYPE_BASE + this.code,
      title: PROBLEMS[this.code].title,
      status: this.status,
      detail: this.detail,
      code: this.code,
      ...this.extensions,
    };
  }
}

export function sendProblem(reply: FastifyReply, error: HttpError): FastifyReply {
  const headers = error.status === 401 ? { 'www-authenticate': 'Bearer' } : {};
  return reply.code(error.status).headers(headers).type('application/problem+json').send(error.toProblem());
}

/**
 * Maps everything thrown in a request to a problem. Fastify's own errors (body too large, bad
 * JSON, schema validation) become 4xx with their meaning; outages become 503; anything else is a
 * bug: logged with its stack, answered with a bare 500 that reveals nothing.
 */
export function installProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    const problem = toHttpError(error);
    if (problem.status >= 500 && problem.code === 'internal_error') {
      request.log.error({ err: error }, 'unhandled error');
    } else if (problem.status >= 500) {
      request.log.warn({ err: error }, problem.detail);
    }
    return sendProblem(reply, problem);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      new HttpError('route_not_found', `no route for ${request.method} ${request.url.split('?')[0]}`),
    ),
  );
}

export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (isStoreUnavailable(error)) {
    return new HttpError(
      'store_unavailable',
      'the database is unavailable; try again shortly',
      {},
      { cause: error },
    );
  }
  const fastifyError = error as Partial<FastifyError> & {
    validation?: unknown[];
    validationContext?: string;
  };
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError('payload_too_large', 'the request body is larger than this endpoint accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpError('unsupported_media_type', 'send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HttpError('malformed_json', 'the request body is empty; send a JSON document');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new HttpError(
        'malformed_json',
        `the request body is not valid JSON: ${fastifyError.message ?? ''}`,
      );
    case 'FST_ERR_VALIDATION':
      return new HttpError('invalid_request', validationDetail(fastifyError));
    default:
      break;
  }
  if (
    error instanceof SyntaxError ||
    (fastifyError.statusCode === 400 && /JSON/i.test(fastifyError.message ?? ''))
  ) {
    return new HttpError(
      'malformed_json',
      `the request body is not valid JSON: ${fastifyError.message ?? ''}`,
    );
  }
  if (
    typeof fastifyError.statusCode === 'number' &&
    fastifyError.statusCode >= 400 &&
    fastifyError.statusCode < 500
  ) {
    // Fastify's other client errors (a bad Content-Length, …) are all problems with the request.
    return new HttpError('invalid_request', fastifyError.message ?? 'the request is invalid');
  }
  return new HttpError(
    'internal_error',
    'something went wrong on our side; it has been logged',
    {},
    { cause: error },
  );
}

function validationDetail(error: { message?: string; validationContext?: string }): string {
  // Fastify's message already names the field: "body/enabled must be boolean".
  return error.message ?? 'the request does not match the expected shape';
}
