import type { FastifyRequest } from 'fastify';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  RootOperationNode,
} from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTempStore } from '../../test/support/temp-store.js';
import { systemClock } from '../domain/clock.js';
import { createRateLimiter } from './rate-limits.js';

/** Counts the store reads of rate_limit_counters the limiter makes. */
function countingReads(): KyselyPlugin & { reads: number } {
  return {
    reads: 0,
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      if (args.node.kind === 'SelectQueryNode') this.reads++;
      return args.node;
    },
    async transformResult(args: PluginTransformResultArgs) {
      return args.result;
    },
  };
}

const from = (ip: string) => ({ ip, headers: {} }) as FastifyRequest;

describe('the failed-authentication lock-out', () => {
  let temp: Awaited<ReturnType<typeof openTempStore>>;
  let plugin: ReturnType<typeof countingReads>;
  let limiter: ReturnType<typeof createRateLimiter>;
  beforeEach(async () => {
    temp = await openTempStore();
    plugin = countingReads();
    limiter = createRateLimiter({
      store: { ...temp.store, db: temp.store.db.withPlugin(plugin) },
      clock: systemClock,
      limits: { authFailuresPerMinute: 3, apiCallsPerMinute: 1000 },
    });
  });
  afterEach(async () => {
    await temp.dispose();
  });

  it('asks the store once for many requests arriving together while nobody failed', async () => {
    await Promise.all(Array.from({ length: 50 }, (_, i) => limiter.refuseLockedOut(from(`10.0.0.${i}`))));
    expect(plugin.reads).toBe(1);
  });

  it('does not cache "no failures" read while a failure was being counted, and locks the client out', async () => {
    const asked = limiter.refuseLockedOut(from('10.0.0.1'));
    await limiter.countFailure(from('10.0.0.9'));
    await asked;
    const before = plugin.reads;
    await limiter.refuseLockedOut(from('10.0.0.1'));
    // Asked again (the window has a failure now), and for this client's own count.
    expect(plugin.reads).toBeGreaterThan(before);

    await limiter.countFailure(from('10.0.0.9'));
    await limiter.countFailure(from('10.0.0.9'));
    await expect(limiter.refuseLockedOut(from('10.0.0.9'))).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(limiter.refuseLockedOut(from('10.0.0.1'))).resolves.toBeUndefined();
  });

  it('counts bad webhook signatures per hook, never against the address or the API', async () => {
    for (let i = 0; i < 3; i++) await limiter.countWebhookFailure(480_000_001);
    await expect(limiter.countWebhookFailure(480_000_001)).rejects.toMatchObject({
      code: 'rate_limited',
      detail: expect.stringContaining('validly signed webhooks are still accepted'),
    });
    // Another hook, and requests naming none Zekt placed, have counts of their own.
    await expect(limiter.countWebhookFailure(480_000_002)).resolves.toBeUndefined();
    for (let i = 0; i < 3; i++) await limiter.countWebhookFailure(null);
    await expect(limiter.countWebhookFailure(null)).rejects.toMatchObject({ code: 'rate_limited' });
    // The API's clients are not locked out, and its "nobody failed" cache still holds.
    const before = plugin.reads;
    await limiter.refuseLockedOut(from('10.0.0.1'));
    await limiter.refuseLockedOut(from('10.0.0.1'));
    expect(plugin.reads - before).toBe(1);
  });
});
