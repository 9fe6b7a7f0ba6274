import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { isStoreConflict, isStoreUnavailable, StoreRejectedValueError } from '../store/store-errors.js';

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
  /** Headers the answer carries besides the problem (`Retry-After`). */
  readonly headers: Record<string, string>;
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extensions: Record<string, unknown> = {},
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(detail, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = PROBLEMS[code].status;
    this.headers = options?.headers ?? {};
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
  const headers = { ...(error.status === 401 ? { 'www-authenticate': 'Bearer' } : {}), ...error.headers };
  return reply.code(error.status).headers(headers).type('application/problem+json').send(error.toProblem());
}

/**
 * A problem written straight to a socket or a raw response, for errors Node or Fastify meet before
 * a request has a reply object (a request that is not HTTP, headers too large, a timeout).
 */
export function rawProblem(
  error: HttpError,
  extraHeaders: Record<string, string> = {},
): {
  status: number;
  headers: Record<string, string>;
  body: string;
} {
  const body = JSON.stringify(error.toProblem());
  return {
    status: error.status,
    headers: {
      'content-type': 'application/problem+json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'x-content-type-options': 'nosniff',
      ...error.headers,
      ...extraHeaders,
    },
    body,
  };
}

/**
 * Maps everything thrown in a request to a problem. Fastify's own errors (body too large, bad
 * JSON, schema validation) become 4xx with their meaning; outages become 503; anything else is a
 * bug: logged with its stack, answered with a bare 500 that reveals nothing.
 */
export function installProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    if (isClientDisconnect(error)) {
      // Nobody is left to answer; this is the client's doing, not an outage.
      request.log.info(
        { code: (error as { code?: string }).code },
        'the client closed the connection before its request arrived',
      );
      return sendProblem(reply, new HttpError('invalid_request', 'the request body did not arrive'));
    }
    const problem = toHttpError(error);
    if (problem.status >= 500 && problem.code === 'internal_error') {
      request.log.error({ err: error }, 'unhandled error');
    } else if (problem.code === 'server_unavailable') {
      // Shedding load is the server working as designed, not a fault worth a stack.
      request.log.info(problem.detail);
    } else if (problem.status >= 500) {
      // A refusal Zekt decided itself (setup mode, not ready) says all in its code and detail: a
      // stack would only bury the line, once per probe. An outage keeps its cause's stack.
      const own = error instanceof HttpError && error.cause === undefined;
      request.log.warn(own ? { code: problem.code } : { err: error }, problem.detail);
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

/** The client hung up while its request was being read (a reset, or the stream cut short). */
export function isClientDisconnect(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    !(error instanceof HttpError) &&
    !isStoreUnavailable(error) &&
    (code === 'ECONNRESET' ||
      code === 'ECONNABORTED' ||
      code === 'ERR_STREAM_PREMATURE_CLOSE' ||
      message === 'aborted')
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
  if (isStoreConflict(error)) {
    return new HttpError(
      'store_conflict',
      'the database ended this request’s transaction to resolve a conflict with a concurrent request; nothing of it was stored: send it again',
      {},
      { cause: error, headers: { 'retry-after': '1' } },
    );
  }
  if (error instanceof StoreRejectedValueError) {
    return new HttpError(
      'invalid_request',
      'the request holds text the store cannot keep (a NUL character)',
      {},
      {
        cause: error,
      },
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
