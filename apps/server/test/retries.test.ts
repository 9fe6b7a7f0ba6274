import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Fault } from 'zekt-github-sim';
import { createManualClock, type ManualClock } from '../src/domain/clock.js';
import { makeDurable, setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';
import type { JsonBody } from './support/processes.js';

/**
 * Durable dispatch against GitHub's failure modes: the simulator answers the first
 * attempts with faults; every attempt is recorded with its category, GitHub's own wait instructions
 * are honoured, 404/422 are not retried, and an exhausted schedule fails the delivery.
 * Zekt's clock is a manual one that the tests move to each delivery's next attempt, so the
 * schedule's waits and GitHub's Retry-After pass without being waited out, and an unreachable
 * GitHub gets exactly the attempts the test lets it have.
 */
const SCHEDULE = '0ms,100ms,150ms,200ms,250ms,300ms,300ms,300ms';

describe('durable dispatch retries', () => {
  let h: Harness;
  let world: World;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = createManualClock(Date.now());
    h = await startHarness({
      transport: 'inject',
      clock,
      env: {
        // The dispatcher notices a clock move at its next poll (not faster: on a loaded machine
        // the polls would starve the 400 ms dispatch timeout).
        ZEKT_POLL_INTERVAL_MS: '50',
        ZEKT_RETRY_SCHEDULE: SCHEDULE,
        ZEKT_DISPATCH_TIMEOUT_MS: '400',
        ZEKT_LEASE_MS: '5000',
        ZEKT_INSTALLATION_DISPATCH_RATE: '0',
      },
    });
    world = await setUpWorld(h);
  });
  afterEach(async () => {
    await h.close();
  });

  const faultDispatches = (faults: Fault[], repeat = false) =>
    h.sim.injectFaults({ method: 'POST', path: '/repos/globex/app/dispatches', faults, repeat });
  /**
   * Moves the clock to the earliest next attempt of a pending delivery, once no attempt is in
   * flight (a lease is never outrun), then checks.
   */
  const onClock =
    <T>(check: () => Promise<T | undefined>) =>
    async (): Promise<T | undefined> => {
      const pending = await h.zekt.store.db
        .selectFrom('deliveries')
        .select(['next_attempt_at', 'lease_expires_at'])
        .where('dispatch_state', '=', 'pending')
        .execute();
      const now = clock.now();
      if (!pending.some((row) => row.lease_expires_at !== null && row.lease_expires_at > now)) {
        const next = Math.min(...pending.map((row) => row.next_attempt_at ?? Number.POSITIVE_INFINITY));
        if (Number.isFinite(next) && next > now) clock.set(next);
      }
      return check();
    };
  async function settled(): Promise<JsonBody> {
    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const row = await eventually(() =>
      h.zekt.store.db.selectFrom('deliveries').select(['delivery_id', 'dispatch_state']).executeTakeFirst(),
    );
    return eventually(
      onClock(async () => {
        const response = await h.call('GET', `/api/v1/deliveries/${row.delivery_id}`, {
          token: world.providerToken,
        });
        return response.body.dispatch.state === 'pending' ? undefined : response.body;
      }),
      20_000,
    );
  }

  it('keeps trying through 503, 429 + Retry-After, timeouts, resets and secondary rate limits until GitHub accepts', async () => {
    await makeDurable(h, world);
    faultDispatches([
      { kind: 'status', status: 503 },
      { kind: 'retry_after', status: 429, retryAfterSeconds: 1 },
      { kind: 'hang' },
      { kind: 'reset' },
      { kind: 'secondary_rate_limit', retryAfterSeconds: 1 },
      { kind: 'status', status: 403, body: { message: 'Resource not accessible by integration' } },
    ]);
    const record = await settled();
    expect(record).toMatchObject({
      deliveryStatus: 'Dispatched',
      dispatch: { state: 'accepted', attempts: 7 },
      // Six failed attempts before the one GitHub accepted, and the payload said so.
      retryNumber: 6,
    });
    const sent = h.sim.dispatches({ repository: 'globex/app' });
    expect(sent.map((d) => (d.clientPayload as { zekt: { retry: number } }).zekt.retry)).toEqual([6]);
    expect(
      record.attempts.map((a: { category: string | null; status: number | null }) => [a.status, a.category]),
    ).toEqual([
      [503, 'service_unavailable'],
      [429, 'rate_limited'],
      [null, 'timeout'],
      [null, 'network'],
      [403, 'rate_limited'],
      [403, 'auth'],
      [204, null],
    ]);
    expect(record.attempts.map((a: { number: number }) => a.number)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Retry-After: 1 pushed the next attempt at least a second out, beyond the 150 ms schedule entry.
    const at = record.attempts.map((a: { at: string }) => Date.parse(a.at));
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(1000);
    expect(at[5] - at[4]).toBeGreaterThanOrEqual(1000);
    expect(record.attempts[1].headers).toMatchObject({ 'retry-after': '1' });
    expect(record.attempts[4].message).toContain('secondary rate limit');
    expect(record.platformResponse).toMatchObject({ status: 204 });

    const diagnostics = await h.call('GET', `/api/connections/${world.subscriptionId}/diagnostics`, {
      token: world.consumerToken,
    });
    expect(diagnostics.body.categories).toEqual({
      service_unavailable: 1,
      timeout: 1,
      auth: 1,
      rate_limited: 2,
      network: 1,
      not_found: 0,
      rejected: 0,
      not_started: 0,
      other: 0,
    });
    expect(diagnostics.body.recentFailures).toHaveLength(6);
    expect(diagnostics.body.recentFailures[0]).toMatchObject({ category: 'auth', status: 403, attempt: 6 });
    expect(diagnostics.body.recentFailures[0].message).toContain('Resource not accessible by integration');
    expect(diagnostics.body.recommendations.map((r: { category: string }) => r.category)).toEqual([
      'rate_limited',
      'service_unavailable',
      'timeout',
      'auth',
      'network',
    ]);
    expect(diagnostics.body.recommendations[3].text).toContain('Contents: read & write');
  });

  it('does not retry 404 or 422, and fails the delivery with the reason', async () => {
    await makeDurable(h, world);
    faultDispatches([{ kind: 'status', status: 404, body: { message: 'Not Found' } }]);
    const notFound = await settled();
    expect(notFound).toMatchObject({
      deliveryStatus: 'Failed',
      failureReason: 'consumer_not_found',
      dispatch: { attempts: 1 },
    });
    expect(notFound.attempts).toHaveLength(1);
    faultDispatches([{ kind: 'status', status: 422, body: { message: 'client_payload is too large.' } }]);
    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const rejected = await eventually(async () => {
      const list = await h.call('GET', '/api/v1/deliveries?status=Failed', { token: world.providerToken });
      // Both failed at the same instant of the manual clock: the list's order between them is the
      // ids', so the new one is found by id, not by position.
      return list.body.deliveries.length === 2
        ? list.body.deliveries.find((d: { deliveryId: string }) => d.deliveryId !== notFound.deliveryId)
        : undefined;
    });
    expect(rejected).toMatchObject({ failureReason: 'dispatch_rejected', dispatch: { attempts: 1 } });
  });

  it('fails a durable delivery with dispatch_exhausted when the schedule runs out', async () => {
    await makeDurable(h, world);
    faultDispatches([{ kind: 'status', status: 502 }], true);
    const record = await settled();
    expect(record).toMatchObject({
      deliveryStatus: 'Failed',
      failureReason: 'dispatch_exhausted',
      isFinalized: false,
    });
    expect(record.attempts).toHaveLength(SCHEDULE.split(',').length);
    expect(record.attempts.every((a: { category: string }) => a.category === 'service_unavailable')).toBe(
      true,
    );
  });

  it('makes exactly one attempt for a non-durable delivery', async () => {
    faultDispatches([{ kind: 'status', status: 503 }]);
    const record = await settled();
    expect(record).toMatchObject({
      durable: false,
      deliveryStatus: 'Failed',
      failureReason: 'dispatch_failed: service_unavailable',
      dispatch: { state: 'failed', attempts: 1 },
    });
    expect(h.sim.dispatches()).toEqual([]);
  });

  it('records an unreachable GitHub as a network failure and recovers when it is back', async () => {
    await makeDurable(h, world);
    await settled();
    const runId = Number(
      (await h.zekt.store.db.selectFrom('events').select('run_id').executeTakeFirstOrThrow()).run_id,
    );
    await h.sim.suspend();
    // The re-run's webhook still reaches Zekt (GitHub sends it); Zekt cannot reach GitHub back.
    await h.sim.rerunWorkflow('acme/api', runId);
    const rerun = async () => {
      const list = await h.call('GET', '/api/v1/deliveries?status=Dispatched', {
        token: world.providerToken,
      });
      return list.body.deliveries.find(
        (d: { provider: { runAttempt: number } }) => d.provider.runAttempt === 2,
      );
    };
    // GitHub comes back once Zekt has tried and failed, however long that took on this machine (a
    // fixed 500 ms suspension raced the router under load). The clock stands still meanwhile, so
    // no retry comes due while GitHub is away; moving it then lets the next attempt through.
    await eventually(async () => {
      const replay = await rerun();
      if (!replay) return undefined;
      const detail = await h.call('GET', `/api/v1/deliveries/${replay.deliveryId}`, {
        token: world.providerToken,
      });
      return detail.body.attempts.some((a: { category: string | null }) => a.category === 'network')
        ? true
        : undefined;
    }, 20_000);
    await h.sim.resume();
    const record = await eventually(
      onClock(async () => {
        const replay = await rerun();
        return replay?.dispatch.state === 'accepted' ? replay : undefined;
      }),
      20_000,
    );
    const detail = await h.call('GET', `/api/v1/deliveries/${record.deliveryId}`, {
      token: world.providerToken,
    });
    const categories = detail.body.attempts.map((a: { category: string | null }) => a.category);
    expect(categories.length).toBeGreaterThan(1);
    expect(categories.slice(0, -1).every((c: string) => c === 'network')).toBe(true);
    expect(categories.at(-1)).toBeNull();
    expect(detail.body.attempts[0].message).toContain('ECONNREFUSED');
  });
});
