import type { Answer, Problem, paths } from '@zekt/client';
import type { Client } from 'openapi-fetch';
import createClient from 'openapi-fetch';

/**
 * A typed client of the management API, for the CLI, the demo seed and the tests: paths, bodies
 * and answers are @zekt/client's types, generated from docs/openapi.json. The types are imported
 * as types only, so the published server needs openapi-fetch but not that workspace package.
 *
 * An error answer throws a `ZektApiError` carrying the problem's `code`, so no caller reads a
 * failure as a result; a request that never reaches Zekt throws one with `code: 'network'`.
 */
export type ZektClient = Client<paths>;
export type { Answer, Problem };

export interface ZektClientOptions {
  baseUrl: string;
  /** An API token (`zkt_…`), sent as `Authorization: Bearer`. */
  token?: string;
  /** A console session's `Cookie` header. */
  cookie?: string;
  /** How requests go out (default: the global fetch); tests pass one that skips the socket. */
  fetch?: (request: Request) => Promise<Response>;
}

export class ZektApiError extends Error {
  override readonly name = 'ZektApiError';
  constructor(
    readonly method: string,
    /** The path and query asked for, e.g. `/api/v1/deliveries?status=Failed`. */
    readonly path: string,
    /** 0 when the request did not reach Zekt. */
    readonly status: number,
    readonly problem: Problem,
    options?: { cause?: unknown },
  ) {
    super(status === 0 ? problem.detail : `${method} ${path} answered ${status}: ${problem.detail}`, options);
  }

  /** The problem's stable code (problem-codes.ts), `network`, or `error` for an answer that is no problem. */
  get code(): string {
    return this.problem.code;
  }
}

export function createZektClient(options: ZektClientOptions): ZektClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    headers: {
      accept: 'application/json',
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...(options.cookie === undefined ? {} : { cookie: options.cookie }),
    },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  client.use({
    onError({ request, error }) {
      const { method, path } = target(request);
      const detail = error instanceof Error ? error.message : String(error);
      return new ZektApiError(
        method,
        path,
        0,
        { type: 'about:blank', title: 'Zekt does not answer', status: 0, detail, code: 'network' },
        { cause: error },
      );
    },
    async onResponse({ request, response }) {
      if (response.ok) return undefined;
      const { method, path } = target(request);
      throw new ZektApiError(method, path, response.status, await problemOf(response));
    },
  });
  return client;
}

/**
 * The body of a successful answer, typed: with the client's errors thrown, only a success
 * reaches here (an answer without a body, 204, gives undefined).
 */
export async function ok<T>(call: Promise<{ data?: T; response: Response }>): Promise<T> {
  return (await call).data as T;
}

function target(request: Request): { method: string; path: string } {
  const url = new URL(request.url);
  return { method: request.method, path: url.pathname + url.search };
}

/** The answer's problem; a body that is none (a proxy's HTML page, say) keeps its status as the detail. */
async function problemOf(response: Response): Promise<Problem> {
  const text = await response.clone().text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const problem = (typeof body === 'object' && body !== null ? body : {}) as Partial<Problem>;
  return {
    ...problem,
    type: problem.type ?? 'about:blank',
    title: problem.title ?? response.statusText,
    status: response.status,
    detail: problem.detail ?? (response.statusText || `HTTP ${response.status}`),
    code: problem.code ?? 'error',
  };
}
