import type { FastifyRequest } from 'fastify';
import type { Clock } from '../domain/clock.js';
import { highestCount, incrementWindow } from '../store/rate-limit-counters.js';
import type { Store } from '../store/store.js';
import { HttpError } from './problem.js';
import { RATE_WINDOW_MS } from './rate-limits.js';

/**
 * Wrong `ZEKT_METRICS_TOKEN` guesses, limited like failed authentication on the API
 * (`ZEKT_AUTH_FAILURE_LIMIT` a minute), per client address, counted in the store so every process
 * of a deployment counts together. Its own buckets: a scraper's mistakes never lock a client out
 * of the API, nor the API's of `/metrics`. Once a client is over the limit its requests are
 * answered 429 before the token is compared, so the limit is no oracle.
 *
 * A store that does not answer does not stop a scrape: metrics matter most during an outage, and
 * the token, compared in constant time, is what keeps `/metrics` closed; the limit only slows
 * guessing down.
 */
export interface MetricsTokenGuard {
  /** 429 when this client sent too many wrong metrics tokens this minute. */
  refuseLockedOut(request: FastifyRequest): Promise<void>;
  /** Counts a wrong token against the request's client. */
  countWrongToken(request: FastifyRequest): Promise<void>;
}

export function createMetricsTokenGuard(deps: {
  store: Store;
  clock: Clock;
  wrongTokensPerMinute: number;
}): MetricsTokenGuard {
  const bucket = (request: FastifyRequest) => `metrics-token:client:${request.ip}`;
  const window = () => {
    const now = deps.clock.now();
    const start = now - (now % RATE_WINDOW_MS);
    return { start, retryAfterSeconds: Math.max(1, Math.ceil((start + RATE_WINDOW_MS - now) / 1000)) };
  };
  return {
    async refuseLockedOut(request) {
      const { start, retryAfterSeconds } = window();
      const wrong = await highestCount(deps.store.db, [bucket(request)], start).catch(() => 0);
      if (wrong >= deps.wrongTokensPerMinute) {
        throw new HttpError(
          'rate_limited',
          `too many wrong metrics tokens from this client in the last minute (ZEKT_AUTH_FAILURE_LIMIT); try again in ${retryAfterSeconds} s`,
          {},
          { headers: { 'retry-after': String(retryAfterSeconds) } },
        );
      }
    },
    async countWrongToken(request) {
      await incrementWindow(deps.store.db, bucket(request), window().start).catch(() => undefined);
    },
  };
}
