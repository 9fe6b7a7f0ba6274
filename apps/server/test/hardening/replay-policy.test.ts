import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../../src/domain/clock.js';
import { setUpWorld, type World } from '../support/demo-world.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';

/**
 * A replay — and any dispatch — needs an approved subscription;
 * replays of one delivery are limited; `Idempotency-Key` makes a repeated replay return the first.
 */
let h: Harness;
let world: World;
let clock: ManualClock;
let deliveryId: string;

beforeEach(async () => {
  clock = createManualClock(Date.now());
  h = await startHarness({ transport: 'inject', clock, env: { ZEKT_INSTALLATION_DISPATCH_RATE: '0' } });
  world = await setUpWorld(h);
  await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
  const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
  deliveryId = (dispatch.clientPayload as { zekt: { deliveryId: string } }).zekt.deliveryId;
});
afterEach(async () => {
  await h.close();
});

const replay = (token: string, headers: Record<string, string> = {}) =>
  h.call('POST', `/api/replay/${deliveryId}`, { token, headers });

describe('replay', () => {
  it('is refused on both sides once the consumer withdrew the subscription, and nothing is sent', async () => {
    const withdrawn = await h.call('POST', `/api/v1/subscriptions/${world.subscriptionId}/revoke`, {
      token: world.consumerToken,
    });
    expect([withdrawn.status, withdrawn.body.status]).toEqual([200, 'withdrawn']);
    // The provider sees the withdrawal, not a revocation it never made.
    const seen = await h.call('GET', `/api/v1/subscriptions/${world.subscriptionId}`, {
      token: world.providerToken,
    });
    expect(seen.body.status).toBe('withdrawn');
    for (const token of [world.providerToken, world.consumerToken]) {
      const refused = await replay(token);
      expect([refused.status, refused.body.code, refused.body.statusCurrent]).toEqual([
        409,
        'subscription_inactive',
        'withdrawn',
      ]);
      expect(refused.contentType).toContain('application/problem+json');
    }
    const again = await h.call('POST', `/api/v1/subscriptions/${world.subscriptionId}/revoke`, {
      token: world.providerToken,
    });
    expect([again.status, again.body.code, again.body.statusCurrent]).toEqual([
      409,
      'invalid_transition',
      'withdrawn',
    ]);
    const rows = await h.zekt.store.db.selectFrom('deliveries').select('delivery_id').execute();
    expect(rows).toHaveLength(1);
    expect(h.sim.dispatches({ repository: 'globex/app' })).toHaveLength(1);
  });

  it('is refused on both sides once the provider revoked the subscription', async () => {
    const revoked = await h.call('POST', `/api/v1/subscriptions/${world.subscriptionId}/revoke`, {
      token: world.providerToken,
    });
    expect([revoked.status, revoked.body.status]).toEqual([200, 'revoked']);
    const seen = await h.call('GET', `/api/v1/subscriptions/${world.subscriptionId}`, {
      token: world.consumerToken,
    });
    expect(seen.body.status).toBe('revoked');
    for (const token of [world.providerToken, world.consumerToken]) {
      const refused = await replay(token);
      expect([refused.status, refused.body.code, refused.body.statusCurrent]).toEqual([
        409,
        'subscription_inactive',
        'revoked',
      ]);
    }
    expect(h.sim.dispatches({ repository: 'globex/app' })).toHaveLength(1);
  });

  it('allows 10 replays of a delivery per hour, then answers 429 with Retry-After until the hour has passed', async () => {
    for (let i = 0; i < 10; i++)
      expect((await replay(i % 2 ? world.consumerToken : world.providerToken)).status).toBe(202);
    const limited = await replay(world.providerToken);
    expect([limited.status, limited.body.code]).toEqual([429, 'replay_limit_reached']);
    expect(limited.contentType).toContain('application/problem+json');
    const retryAfter = await fetch(`${h.url}/api/replay/${deliveryId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.providerToken}` },
    });
    expect(Number(retryAfter.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(retryAfter.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    // A replay of a replay is a replay of the same delivery.
    const replays = await h.zekt.store.db
      .selectFrom('deliveries')
      .select('delivery_id')
      .where('replay_of', 'is not', null)
      .execute();
    expect(replays).toHaveLength(10);
    const ofReplay = await h.call('POST', `/api/replay/${replays[0]!.delivery_id}`, {
      token: world.providerToken,
    });
    expect(ofReplay.status).toBe(429);

    clock.advance(3_600_000 + 1000);
    expect((await replay(world.providerToken)).status).toBe(202);
  });

  it('returns the first replay for a repeated Idempotency-Key, and only creates one', async () => {
    const first = await replay(world.consumerToken, { 'idempotency-key': 'retry-1' });
    const again = await replay(world.consumerToken, { 'idempotency-key': 'retry-1' });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.deliveryId).toBe(first.body.deliveryId);
    const concurrent = await Promise.all(
      Array.from({ length: 4 }, () => replay(world.providerToken, { 'idempotency-key': 'burst' })),
    );
    expect(new Set(concurrent.map((r) => r.body.deliveryId)).size).toBe(1);
    const other = await replay(world.consumerToken, { 'idempotency-key': 'retry-2' });
    expect(other.body.deliveryId).not.toBe(first.body.deliveryId);
    const replays = await h.zekt.store.db
      .selectFrom('deliveries')
      .select('delivery_id')
      .where('replay_of', 'is not', null)
      .execute();
    expect(replays).toHaveLength(3);
    const bad = await replay(world.consumerToken, { 'idempotency-key': 'x'.repeat(300) });
    expect([bad.status, bad.body.code]).toEqual([400, 'invalid_request']);
  });
});

describe('dispatch', () => {
  it('does not send a pending delivery whose subscription was revoked meanwhile', async () => {
    await h.close();
    h = await startHarness({
      transport: 'inject',
      clock,
      workers: false,
      env: { ZEKT_INSTALLATION_DISPATCH_RATE: '0' },
    });
    world = await setUpWorld(h);
    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    expect(await h.zekt.router.routeDue()).toBeGreaterThan(0);
    await h.call('POST', `/api/v1/subscriptions/${world.subscriptionId}/revoke`, {
      token: world.providerToken,
    });
    await h.zekt.dispatcher.dispatchDue();
    expect(h.sim.dispatches({ repository: 'globex/app' })).toHaveLength(0);
    const [row] = await h.zekt.store.db.selectFrom('deliveries').selectAll().execute();
    expect(row).toMatchObject({ status: 'Failed', failure_reason: 'subscription_inactive' });
  });
});
