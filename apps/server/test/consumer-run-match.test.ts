import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findDeliveryOfRun } from '../src/ingest/consumer-run-match.js';
import { insertDeliveries, newDeliveryRow } from '../src/store/deliveries/index.js';
import type { Store } from '../src/store/store.js';
import { openTempStore } from './support/temp-store.js';

/**
 * Which delivery a consumer run is, by its id, when the run's first webhook arrives
 * before the dispatcher recorded GitHub's answer that named it: a run of a repository with a
 * dispatch in flight is looked up again until the answer is recorded; any other unknown run is
 * answered at once.
 */
let store: Store;
let dispose: () => Promise<void>;
beforeEach(async () => {
  ({ store, dispose } = await openTempStore());
});
afterEach(async () => {
  await dispose();
});

const REPOSITORY = 20;
const RUN = 9_000_000_001;

async function delivery(id: string, lease: { owner: string; expiresAt: number } | null) {
  const row = newDeliveryRow(
    {
      deliveryId: id,
      eventId: 'evt_1',
      subscriptionId: 'sub_1',
      serviceId: 'svc_1',
      providerAccountId: 1,
      providerRepositoryId: 10,
      consumerAccountId: 2,
      consumerRepositoryId: REPOSITORY,
      correlationId: '77',
      runAttempt: 1,
      eventType: 'deployed',
      durable: true,
    },
    Date.now(),
  );
  await insertDeliveries(store.db, [
    lease ? { ...row, lease_owner: lease.owner, lease_expires_at: lease.expiresAt, attempt_count: 1 } : row,
  ]);
}

const find = (event: string, waitMs?: number) =>
  findDeliveryOfRun(store.db, {
    repositoryId: REPOSITORY,
    runId: RUN,
    event,
    now: () => Date.now(),
    ...(waitMs === undefined ? {} : { waitMs }),
  });

describe('a consumer run matched by its id', () => {
  it('finds the delivery whose dispatch GitHub answered with the run', async () => {
    await delivery('delivery-a', null);
    await store.db
      .updateTable('deliveries')
      .set({ consumer_run_id: RUN, dispatch_state: 'accepted' })
      .where('delivery_id', '=', 'delivery-a')
      .execute();
    expect(await find('workflow_dispatch')).toEqual({ deliveryId: 'delivery-a' });
    // Another repository's run of the same id is not this one's.
    expect(
      await findDeliveryOfRun(store.db, {
        repositoryId: 21,
        runId: RUN,
        event: 'workflow_dispatch',
        now: Date.now,
      }),
    ).toBeUndefined();
  });

  it('waits for the answer of a dispatch in flight to be recorded', async () => {
    await delivery('delivery-b', { owner: 'worker-1', expiresAt: Date.now() + 60_000 });
    const found = find('workflow_dispatch');
    // The dispatcher records GitHub's answer a moment after the webhook arrived.
    setTimeout(() => {
      void store.db
        .updateTable('deliveries')
        .set({ consumer_run_id: RUN, dispatch_state: 'accepted', lease_owner: null, lease_expires_at: null })
        .where('delivery_id', '=', 'delivery-b')
        .execute();
    }, 300);
    expect(await found).toEqual({ deliveryId: 'delivery-b' });
  });

  it('finds nothing for a run no dispatch in flight can be, nor for a repository_dispatch run', async () => {
    // Nothing in flight: a run someone started by hand.
    expect(await find('workflow_dispatch')).toBeUndefined();
    // In flight, but a repository_dispatch run is never named by a dispatch's answer.
    await delivery('delivery-c', { owner: 'worker-1', expiresAt: Date.now() + 60_000 });
    expect(await find('repository_dispatch')).toBeUndefined();
    // In flight and never named: given up after the wait.
    expect(await find('workflow_dispatch', 200)).toBeUndefined();
  });
});
