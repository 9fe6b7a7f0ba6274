import { HttpClient } from '@actions/http-client';
import { isTransientStatus, MAX_ATTEMPTS, retryDelayMs } from './retry.js';

/**
 * The action's HTTP calls to Zekt. `@actions/http-client` (the client `@actions/core` uses for the
 * OIDC token) rather than `fetch`, because it honours the runner's `https_proxy` / `no_proxy`:
 * self-hosted runners often reach the network only through a proxy.
 */

/** One attempt gives up after this long without an answer (then it counts as a network error). */
export const ATTEMPT_TIMEOUT_MS = 30_000;

export interface ZektResponse {
  status: number;
  /** The body parsed as JSON, else its text. */
  body: unknown;
  text: string;
}

/** The fields of Zekt's `application/problem+json` answers that the action reads. */
export interface Problem {
  status?: number;
  code?: string;
  title?: string;
  detail?: string;
}

export interface ZektRequest {
  method: 'GET' | 'POST';
  url: string;
  /** Sent as `Authorization: Bearer …`; never logged. */
  token: string;
  /** Serialized as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface CallOptions {
  baseDelayMs: number;
  /** Told about each failed attempt that will be tried again. */
  onRetry: (message: string) => void;
  /** Waits between attempts; tests of the policy pass their own. */
  sleep?: (ms: number) => Promise<void>;
}

/** The service could not be reached, or kept failing, for every attempt. */
export class ZektUnavailableError extends Error {
  override readonly name = 'ZektUnavailableError';
}

const client = new HttpClient('zekt-action', [], {
  // The retry policy is ours (retry.ts): it covers POSTs and 429, which the client's own does not.
  allowRetries: false,
  maxRetries: 0,
  // A redirect would re-send the token to wherever it points; Zekt never redirects.
  allowRedirects: false,
  socketTimeout: ATTEMPT_TIMEOUT_MS,
});

/**
 * Calls Zekt, trying again on network errors, 5xx and 429 (`MAX_ATTEMPTS` in all). Any other
 * answer, 2xx or 4xx, is returned for the caller to interpret.
 *
 * @example await callZekt({ method: 'POST', url, token, body }, { baseDelayMs: 1000, onRetry: core.warning })
 */
export async function callZekt(request: ZektRequest, options: CallOptions): Promise<ZektResponse> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  const what = `${request.method} ${request.url}`;
  for (let attempt = 1; ; attempt += 1) {
    let failure: string;
    let retryAfter: string | undefined;
    try {
      const response = await client.request(
        request.method,
        request.url,
        request.body === undefined ? null : JSON.stringify(request.body),
        {
          accept: 'application/json, application/problem+json',
          authorization: `Bearer ${request.token}`,
          ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...request.headers,
        },
      );
      const status = response.message.statusCode ?? 0;
      const text = await response.readBody();
      if (!isTransientStatus(status)) return { status, body: parseBody(text), text };
      failure = `answered ${status}${describeProblem(parseBody(text), ': ')}`;
      const header = response.message.headers['retry-after'];
      retryAfter = Array.isArray(header) ? header[0] : header;
    } catch (error) {
      failure = `failed: ${networkMessage(error)}`;
    }
    if (attempt >= MAX_ATTEMPTS) {
      throw new ZektUnavailableError(
        `${what} ${failure} (attempt ${attempt} of ${MAX_ATTEMPTS}, giving up): check zekt-api-url and that the Zekt service is up`,
      );
    }
    const delay = retryDelayMs({ attempt, baseDelayMs: options.baseDelayMs, retryAfter });
    options.onRetry(`${what} ${failure} (attempt ${attempt} of ${MAX_ATTEMPTS}); retrying in ${delay} ms`);
    await sleep(delay);
  }
}

/** A response body: parsed when it is JSON, else the text. */
export function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The problem+json fields of a body, when it has them. */
export function problemOf(body: unknown): Problem {
  if (typeof body !== 'object' || body === null) return {};
  const b = body as Record<string, unknown>;
  return {
    ...(typeof b.status === 'number' ? { status: b.status } : {}),
    ...(typeof b.code === 'string' ? { code: b.code } : {}),
    ...(typeof b.title === 'string' ? { title: b.title } : {}),
    ...(typeof b.detail === 'string' ? { detail: b.detail } : {}),
  };
}

/**
 * What an error answer says, for a failure message: the problem's `code` and `detail`, or the
 * start of a body that is not a problem (a proxy's HTML page).
 *
 * @example describeProblem({ code: 'invalid_token', detail: 'the token has expired' }, ': ') // ': invalid_token: the token has expired'
 */
export function describeProblem(body: unknown, prefix: string): string {
  const problem = problemOf(body);
  if (problem.detail !== undefined)
    return `${prefix}${problem.code ? `${problem.code}: ` : ''}${problem.detail}`;
  if (typeof body === 'string' && body.trim() !== '') {
    const text = body.trim().replace(/\s+/g, ' ');
    return `${prefix}${text.length > 200 ? `${text.slice(0, 200)}…` : text}`;
  }
  return '';
}

function networkMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${code} ${error.message}` : error.message;
}
