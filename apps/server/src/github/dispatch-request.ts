import { Pool } from 'undici';
import type { DispatchBody } from '../domain/client-payload.js';

/**
 * The dispatcher's calls to GitHub on kept-alive connections: `POST /repos/{owner}/{repo}/dispatches`,
 * and for `workflow_dispatch` deliveries `POST …/actions/workflows/{file}/dispatches`, the
 * repository's default branch (`GET /repos/{owner}/{repo}`) and the consumer run
 * (`GET …/actions/runs/{run_id}`). The dispatcher sends these at a rate Octokit's general-purpose
 * pipeline (endpoint templating, hooks, fetch and web streams per call) made the largest cost of a
 * delivery after the store; everything else Zekt asks GitHub still goes through
 * Octokit. The result keeps what Octokit's error would have told: GitHub's status, headers and
 * message, or the network error's code.
 * https://docs.github.com/rest/repos/repos#create-a-repository-dispatch-event
 *
 * The calls go through undici's connection pool (the client behind Node's own `fetch`, without
 * fetch's web streams): a call cost a third less CPU than through `node:http`'s request and agent,
 * client and loopback server together, and the dispatch is on every delivery's path.
 */
export interface DispatchResponse {
  status: number;
  /** Lower-case names; a repeated header is an array. */
  headers: Record<string, string | string[] | undefined>;
  /** The response body (GitHub answers 204 with none; errors carry `{ message, … }`). */
  body: string;
}

export interface DispatchRequester {
  post(input: {
    token: string;
    owner: string;
    repo: string;
    body: DispatchBody;
    timeoutMs: number;
  }): Promise<DispatchResponse>;
  /**
   * Any call under the API's base URL: `path` is relative to it, its segments already encoded
   * (`repos/acme/app/actions/runs/42`).
   */
  request(input: {
    method: 'GET' | 'POST';
    path: string;
    token: string;
    body?: unknown;
    timeoutMs: number;
  }): Promise<DispatchResponse>;
  close(): void;
}

/** `owner/repo` as the path segments of a request (`repos/{owner}/{repo}`). */
export function repositoryPath(owner: string, repo: string): string {
  return `repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
}

/** A failure before any response: `code` is Node's (`ECONNRESET`, …) or `TIMEOUT`. */
export class DispatchNetworkError extends Error {
  override readonly name = 'DispatchNetworkError';
  constructor(
    message: string,
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function createDispatchRequester(options: { apiUrl: string; userAgent: string }): DispatchRequester {
  const base = new URL(`${options.apiUrl.replace(/\/$/, '')}/`);
  // One origin, kept-alive connections opened as calls need them (no cap, as Node's agent).
  const pool = new Pool(base.origin);
  async function request(input: {
    method: 'GET' | 'POST';
    path: string;
    token: string;
    body?: unknown;
    timeoutMs: number;
  }): Promise<DispatchResponse> {
    const url = new URL(input.path, base);
    const payload = input.body === undefined ? null : JSON.stringify(input.body);
    // The whole call, from connecting to the body's end, within timeoutMs.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), input.timeoutMs);
    try {
      const response = await pool.request({
        method: input.method,
        path: `${url.pathname}${url.search}`,
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `token ${input.token}`,
          ...(payload === null ? {} : { 'content-type': 'application/json; charset=utf-8' }),
          'user-agent': options.userAgent,
          'x-github-api-version': '2022-11-28',
        },
        body: payload,
        signal: deadline.signal,
      });
      return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
    } catch (error) {
      if (deadline.signal.aborted) {
        throw new DispatchNetworkError(`GitHub did not answer within ${input.timeoutMs} ms`, 'TIMEOUT', {
          cause: error,
        });
      }
      const failure = error as Error & { code?: string };
      throw new DispatchNetworkError(failure.message, failure.code, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    post(input) {
      return request({
        method: 'POST',
        path: `${repositoryPath(input.owner, input.repo)}/dispatches`,
        token: input.token,
        body: input.body,
        timeoutMs: input.timeoutMs,
      });
    },
    request,
    close() {
      // In-flight calls fail as a network error, as they did when Node's agent was destroyed.
      pool.destroy().catch(() => undefined);
    },
  };
}
