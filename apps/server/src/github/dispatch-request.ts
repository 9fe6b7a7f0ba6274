import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { DispatchBody, JsonText } from '../domain/client-payload.js';

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
 */
export interface DispatchResponse {
  status: number;
  headers: IncomingMessage['headers'];
  /** The response body (GitHub answers 204 with none; errors carry `{ message, … }`). */
  body: string;
}

export interface DispatchRequester {
  post(input: {
    token: string;
    owner: string;
    repo: string;
    /** Sent as it is (domain/client-payload.ts, `buildDispatchBody`). */
    body: JsonText<DispatchBody>;
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
  const secure = base.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;
  /** `json`: the request body's JSON text, if it has one. */
  function call(input: {
    method: 'GET' | 'POST';
    path: string;
    token: string;
    json: string | undefined;
    timeoutMs: number;
  }): Promise<DispatchResponse> {
    const url = new URL(input.path, base);
    const payload = input.json === undefined ? null : Buffer.from(input.json);
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const req = send(
        url,
        {
          method: input.method,
          agent,
          headers: {
            accept: 'application/vnd.github+json',
            authorization: `token ${input.token}`,
            ...(payload === null
              ? {}
              : { 'content-type': 'application/json; charset=utf-8', 'content-length': payload.length }),
            'user-agent': options.userAgent,
            'x-github-api-version': '2022-11-28',
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            clearTimeout(timer);
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            });
          });
          res.on('error', (error) => fail(error));
        },
      );
      const fail = (error: Error & { code?: string }) => {
        clearTimeout(timer);
        reject(
          timedOut
            ? new DispatchNetworkError(`GitHub did not answer within ${input.timeoutMs} ms`, 'TIMEOUT', {
                cause: error,
              })
            : new DispatchNetworkError(error.message, error.code, { cause: error }),
        );
      };
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error('timeout'));
      }, input.timeoutMs);
      req.on('error', fail);
      if (payload === null) req.end();
      else req.end(payload);
    });
  }

  return {
    post(input) {
      return call({
        method: 'POST',
        path: `${repositoryPath(input.owner, input.repo)}/dispatches`,
        token: input.token,
        json: input.body,
        timeoutMs: input.timeoutMs,
      });
    },
    request({ body, ...input }) {
      return call({ ...input, json: body === undefined ? undefined : JSON.stringify(body) });
    },
    close() {
      agent.destroy();
    },
  };
}
