import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountLimits } from '../config.js';
import type { Clock } from '../domain/clock.js';
import { anyCountedWithPrefix, highestCount, incrementWindow } from '../store/rate-limit-counters.js';
import type { Store } from '../store/store.js';
import { HttpError } from './problem.js';

/**
 * Rate limits, counted in the store so every API process of a deployment shares them:
 *
 * - failed authentication on `/api/`, per client address and per token prefix: once either has
 *   failed `authFailuresPerMinute` times in the current minute, that client's (or that prefix's)
 *   requests are answered 429 before any credential is checked, so the limit cannot be used as an
 *   oracle;
 * - webhooks with a wrong signature, per hook (`countWebhookFailure`), never per address: GitHub
 *   sends every tenant's webhooks from the same shared addresses, and anyone may add a hook of
 *   their own pointing at Zekt and ping it, so a per-address count let a stranger shut GitHub out
 *   for every tenant. A webhook's signature is checked first (an HMAC of a body already read, far
 *   cheaper than the store's count), and only a request that failed it is counted or refused: a
 *   validly signed webhook is never refused, whatever was sent under its hook id or address.
 *   Guessing a hook secret (HMAC-SHA256, 32 random bytes) is hopeless at any rate; the limit
 *   spares the store a write per bad request and tells a misconfigured sender (429, Retry-After);
 * - management API calls, per token or session: `apiCallsPerMinute`.
 *
 * A token prefix is the token's kind and the first 8 characters of its secret (`zkt_AbCdEfGh`),
 * kept only as a hash: guesses that complete a partly leaked token share it, whatever address
 * they come from. OIDC tokens (JWTs all start alike) have no prefix worth keying on; they are
 * limited per client only.
 */
export const RATE_WINDOW_MS = 60_000;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request's credential was refused though the answer is not a 401 (a 404 that hides it). */
    authenticationFailed?: boolean;
  }
}

export interface RateLimiter {
  /** 429 when this request's client or token prefix failed to authenticate too often this minute. */
  refuseLockedOut(request: FastifyRequest): Promise<void>;
  /** Counts a failed authentication against the request's client and token prefix. */
  countFailure(request: FastifyRequest): Promise<void>;
  /** Counts one management API call of a token or session (`key`: its hash); 429 beyond the limit. */
  countCall(key: string): Promise<void>;
  /**
   * Counts a webhook whose signature is missing or wrong against the hook Zekt placed that it
   * named (`hookId`), or against one shared bucket when it named none Zekt placed (the App's
   * webhook, a stranger's hook, no `X-GitHub-Hook-ID`: none can be validly signed by a tenant's
   * hook, and inventing hook ids then creates no counter rows). 429 once that hook's failures
   * passed the limit this minute. Only ever called after the signature failed.
   */
  countWebhookFailure(hookId: number | null): Promise<void>;
}

const FAILURE_PREFIX = 'auth-failure:';
/** Not under FAILURE_PREFIX: a stranger's bad webhooks must not end the API's "no failures" cache. */
const WEBHOOK_FAILURE_PREFIX = 'webhook-failure:hook:';
const OWN_TOKEN = /^(zkt|zdt|zks)_([A-Za-z0-9_-]{8})/;

/** The prefix of the request's own-format credential (bearer token or session cookie), hashed. */
function tokenPrefix(request: FastifyRequest): string | null {
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  const session = /(?:^|;\s*)(?:__Host-)?zekt_session=([^;]+)/.exec(request.headers.cookie ?? '')?.[1];
  const match = OWN_TOKEN.exec(bearer ?? session ?? '');
  if (!match) return null;
  return createHash('sha256').update(match[0]).digest('hex').slice(0, 32);
}

/**
 * How long a process trusts "nobody failed to authenticate in this window" before asking the store
 * again. The lock-out check runs before every authenticated request, webhooks included; asking the
 * store each time cost a read per webhook. While the window has no failure at all, the
 * answer is cached this long; as soon as it has one (counted here, or seen in the store), every
 * request is checked against the store exactly as before. Another process's first failures are
 * seen at most this late — long before anyone can fail `authFailuresPerMinute` times.
 *
 * Requests that arrive while the store is being asked share that one question: under load on
 * PostgreSQL a read waits for a pool client, and every request arriving meanwhile used to ask
 * again (0.85 reads per webhook in `zekt bench`, where the cache was meant to make it ~0). An
 * answer is only cached if no failure was counted here while it was being read.
 */
const NO_FAILURES_TTL_MS = 250;

export function createRateLimiter(deps: {
  store: Store;
  clock: Clock;
  limits: Pick<AccountLimits, 'authFailuresPerMinute' | 'apiCallsPerMinute'>;
}): RateLimiter {
  let noFailures: { windowStart: number; until: number } | null = null;
  let asking: { windowStart: number; answer: Promise<boolean> } | null = null;
  /** Failures counted by this process: an answer read across one of them is not cached. */
  let failuresCounted = 0;
  const windowMayHaveFailures = (windowStart: number): Promise<boolean> => {
    const at = performance.now();
    if (noFailures && noFailures.windowStart === windowStart && at < noFailures.until)
      return Promise.resolve(false);
    noFailures = null;
    if (asking?.windowStart === windowStart) return asking.answer;
    const countedBefore = failuresCounted;
    const answer = anyCountedWithPrefix(deps.store.db, FAILURE_PREFIX, windowStart)
      .then((any) => {
        if (!any && failuresCounted === countedBefore)
          noFailures = { windowStart, until: at + NO_FAILURES_TTL_MS };
        return any;
      })
      .finally(() => {
        if (asking?.answer === answer) asking = null;
      });
    asking = { windowStart, answer };
    return answer;
  };
  const forgetNoFailures = () => {
    noFailures = null;
    asking = null;
    failuresCounted++;
  };
  const window = () => {
    const now = deps.clock.now();
    const start = now - (now % RATE_WINDOW_MS);
    return { start, retryAfterSeconds: Math.max(1, Math.ceil((start + RATE_WINDOW_MS - now) / 1000)) };
  };
  const failureBuckets = (request: FastifyRequest) => {
    const prefix = tokenPrefix(request);
    return [
      `${FAILURE_PREFIX}client:${request.ip}`,
      ...(prefix ? [`${FAILURE_PREFIX}prefix:${prefix}`] : []),
    ];
  };
  const limited = (retryAfterSeconds: number, detail: string) =>
    new HttpError('rate_limited', detail, {}, { headers: { 'retry-after': String(retryAfterSeconds) } });

  return {
    async refuseLockedOut(request) {
      const { start, retryAfterSeconds } = window();
      if (!(await windowMayHaveFailures(start))) return;
      const failures = await highestCount(deps.store.db, failureBuckets(request), start);
      if (failures >= deps.limits.authFailuresPerMinute) {
        throw limited(
          retryAfterSeconds,
          `too many failed authentications from this client or with this token in the last minute; try again in ${retryAfterSeconds} s`,
        );
      }
    },
    async countFailure(request) {
      const { start } = window();
      // Before and after the writes: a read that ran while they were being written must not be
      // cached as "no failures" either.
      forgetNoFailures();
      for (const bucket of failureBuckets(request)) await incrementWindow(deps.store.db, bucket, start);
      forgetNoFailures();
    },
    async countWebhookFailure(hookId) {
      const { start, retryAfterSeconds } = window();
      const bucket = `${WEBHOOK_FAILURE_PREFIX}${hookId ?? 'other'}`;
      const failures = await incrementWindow(deps.store.db, bucket, start);
      if (failures > deps.limits.authFailuresPerMinute) {
        const which = hookId === null ? 'naming no hook Zekt placed' : `for hook ${hookId}`;
        throw limited(
          retryAfterSeconds,
          `too many webhooks with a wrong signature ${which} in the last minute (ZEKT_AUTH_FAILURE_LIMIT); validly signed webhooks are still accepted; try again in ${retryAfterSeconds} s`,
        );
      }
    },
    async countCall(key) {
      const { start, retryAfterSeconds } = window();
      const calls = await incrementWindow(deps.store.db, `api-call:${key.slice(0, 32)}`, start);
      if (calls > deps.limits.apiCallsPerMinute) {
        throw limited(
          retryAfterSeconds,
          `this token made more than ${deps.limits.apiCallsPerMinute} calls in the last minute (ZEKT_API_CALL_LIMIT); try again in ${retryAfterSeconds} s`,
        );
      }
    },
  };
}

/**
 * Paths whose requests carry credentials checked per client. The login pages are not among them:
 * a locked-out browser must still be able to log in properly. Nor are webhooks: their signature is
 * checked before any limit, and their failures are counted per hook by the webhook route.
 */
const AUTHENTICATED = /^\/api\//;

/** A credential was presented: a failure then is a wrong guess, not a visitor not logged in yet. */
function presentsCredential(request: FastifyRequest): boolean {
  return (
    request.headers.authorization !== undefined ||
    /(?:^|;\s*)(?:__Host-)?zekt_session=/.test(request.headers.cookie ?? '')
  );
}

/**
 * Wires the failure limit into every route authenticated per client: the lock-out check before
 * anything else runs, and the count when a presented credential was refused (a 401, or a refusal
 * that hides itself as a 404), before the answer leaves, so the next request already sees it.
 */
export function limitFailedAuthentication(app: FastifyInstance, limiter: RateLimiter): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (AUTHENTICATED.test(request.url)) await limiter.refuseLockedOut(request);
  });
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const refused = (reply.statusCode === 401 && presentsCredential(request)) || request.authenticationFailed;
    if (refused && AUTHENTICATED.test(request.url)) {
      await limiter.countFailure(request);
    }
    return payload;
  });
}
