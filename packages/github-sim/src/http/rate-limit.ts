/**
 * Per-caller hourly request counters behind GitHub's `x-ratelimit-*` headers: 5000 per hour for
 * the App, each installation and each user token's user, 60 for unauthenticated callers.
 * https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api
 * The simulator reports the counters but does not refuse requests when they run out.
 */
export class RateLimits {
  private readonly buckets = new Map<string, { used: number; resetSeconds: number }>();

  /** Counts one request and returns the headers to send with its response. */
  count(key: string, nowSeconds: number): Record<string, string> {
    const limit = key.startsWith('anonymous') ? 60 : 5000;
    let bucket = this.buckets.get(key);
    if (bucket === undefined || bucket.resetSeconds <= nowSeconds) {
      bucket = { used: 0, resetSeconds: nowSeconds + 3600 };
      this.buckets.set(key, bucket);
    }
    bucket.used += 1;
    return {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - bucket.used)),
      'x-ratelimit-reset': String(bucket.resetSeconds),
      'x-ratelimit-used': String(bucket.used),
      'x-ratelimit-resource': 'core',
    };
  }
}
