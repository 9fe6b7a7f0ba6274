import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { DispatchBody } from '../domain/client-payload.js';

/**
 * `POST /repos/{owner}/{repo}/dispatches` on a kept-alive connection. The dispatcher sends this one
 * request at a rate Octokit's general-purpose pipeline (endpoint templating, hooks, fetch and web
 * streams per call) made the largest cost of a delivery after the store (issue 11); everything
 * else Zekt asks GitHub still goes through Octokit. The result keeps what Octokit's error would
 * have told: GitHub's status, headers and message, or the network error's code.
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
    body: DispatchBody;
    timeoutMs: number;
  }): Promise<DispatchResponse>;
  close(): void;
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
  return {
    post(input) {
      const url = new URL(
        `repos/${encodeURIComponent(input.owner)}/${encodeURIComponent(input.repo)}/dispatches`,
        base,
      );
      const payload = Buffer.from(JSON.stringify(input.body));
      return new Promise((resolve, reject) => {
        let timedOut = false;
        const req = send(
          url,
          {
            method: 'POST',
            agent,
            headers: {
              accept: 'application/vnd.github+json',
              authorization: `token ${input.token}`,
              'content-type': 'application/json; charset=utf-8',
              'content-length': payload.length,
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
        req.end(payload);
      });
    },
    close() {
      agent.destroy();
    },
  };
}
