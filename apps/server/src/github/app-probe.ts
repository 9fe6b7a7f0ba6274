import { createPrivateKey, createSign, type KeyObject } from 'node:crypto';
import type { AppAnswer } from '../domain/service-checks.js';
import { gitHubMessage } from '../domain/service-checks.js';
import { DEFAULT_PROBE_TIMEOUT_MS, describeFetchFailure, parseJson } from '../http-probe.js';

/**
 * Plain calls to GitHub's REST API as the App (its JWT), for the checks: unlike the Octokit client
 * the service runs on, it hands back GitHub's status, message and `Date` header as they came, and
 * turns a key that cannot sign into an answer instead of an exception.
 * https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app
 */
export interface AppProbeOptions {
  apiUrl: string;
  appId: number;
  privateKey: string;
  /** Each call gives up after this long (default 10 s). */
  timeoutMs?: number;
  now?: () => number;
}

/** An answer with what the checks read besides the body. */
export type ProbedAnswer = AppAnswer & {
  /** GitHub's clock minus this machine's, from the `Date` header (null without one). */
  skewMs?: number | null;
  /** The `rel="next"` URL of a paged answer. */
  next?: string | null;
};

export interface AppProbe {
  /** `GET <apiUrl><path>` as the App. */
  get(path: string): Promise<ProbedAnswer>;
  /** Every page of a list (at most `maxPages`), or the first answer that was not a 200. */
  getAll(path: string, maxPages?: number): Promise<{ items: unknown[] } | { failed: ProbedAnswer }>;
}

export function createAppProbe(options: AppProbeOptions): AppProbe {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const base = options.apiUrl.replace(/\/+$/, '');
  let key: KeyObject | { error: string };
  try {
    const parsed = createPrivateKey(options.privateKey);
    key =
      parsed.asymmetricKeyType === 'rsa'
        ? parsed
        : { error: `it is an ${parsed.asymmetricKeyType ?? 'unknown'} key; GitHub Apps sign with RSA` };
  } catch (error) {
    key = { error: (error as Error).message };
  }
  // GitHub's clock minus ours, learnt from a refusal of the token's times (as Octokit does).
  let offsetMs = 0;

  const call = async (url: string, retried: boolean): Promise<ProbedAnswer> => {
    if ('error' in key) return { kind: 'unsignable', reason: key.error };
    const sentAt = now();
    let response: Response;
    try {
      response = await fetch(url, {
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${appJwt(options.appId, key, sentAt + offsetMs)}`,
          'user-agent': 'zekt',
          'x-github-api-version': '2022-11-28',
        },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      return { kind: 'unreachable', reason: describeFetchFailure(error, timeoutMs) };
    }
    const text = await response.text().catch(() => '');
    const body = parseJson(text);
    const date = Date.parse(response.headers.get('date') ?? '');
    // The Date header has a resolution of a second; the middle of the call is the best guess.
    const skewMs = Number.isNaN(date) ? null : date - Math.round((sentAt + now()) / 2);
    if (
      !retried &&
      response.status === 401 &&
      skewMs !== null &&
      /'(Expiration time|Issued at)' claim/.test(gitHubMessage(body) ?? '')
    ) {
      offsetMs = skewMs;
      return call(url, true);
    }
    return { kind: 'answered', status: response.status, body, skewMs, next: nextLink(response) };
  };

  return {
    get: (path) => call(`${base}${path}`, false),
    async getAll(path, maxPages = 10) {
      const items: unknown[] = [];
      let url: string | null = `${base}${path}`;
      for (let page = 0; url !== null && page < maxPages; page++) {
        const answer = await call(url, false);
        if (answer.kind !== 'answered' || answer.status !== 200 || !Array.isArray(answer.body)) {
          return { failed: answer };
        }
        items.push(...answer.body);
        url = answer.next ?? null;
      }
      return { items };
    },
  };
}

/** An App JWT: issued 30 s in the past (GitHub's advice against drift), valid 9 minutes. */
function appJwt(appId: number, key: KeyObject, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000) - 30;
  const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${segment({ alg: 'RS256', typ: 'JWT' })}.${segment({ iat, exp: iat + 540, iss: String(appId) })}`;
  return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(key, 'base64url')}`;
}

function nextLink(response: Response): string | null {
  const next = response.headers
    .get('link')
    ?.split(',')
    .find((part) => /rel="next"/.test(part));
  return next === undefined ? null : (/<([^>]+)>/.exec(next)?.[1] ?? null);
}
