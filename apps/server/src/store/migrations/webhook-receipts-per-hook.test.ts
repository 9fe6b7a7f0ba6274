import { describe, expect, it } from 'vitest';
import { TEST_STORE } from '../../../test/support/test-database.js';
import { useUnmigratedStores } from '../../../test/support/unmigrated-store.js';
import { findRedeliveryState, markRecovered } from '../redelivery-requests.js';
import { recordWebhookDelivery } from '../webhook-deliveries.js';

// Runs on SQLite in the `unit` project and on PostgreSQL in the `postgres` project.
describe(`0010-webhook-receipts-per-hook (${TEST_STORE})`, () => {
  const emptyStore = useUnmigratedStores();

  it('keeps the GUIDs and redelivery requests of before meaningful, and the previous version working', async () => {
    const { store, migrator } = await emptyStore();
    expect((await migrator.migrateTo('0009-usage-shards')).error).toBeUndefined();
    // What a server stored before this migration: GUIDs keyed alone (with the hook they came
    // through, or none), and a redelivery the reconciler asked for.
    await store.db
      .insertInto('webhook_deliveries')
      .values([
        { delivery_guid: 'run', event: 'workflow_run', hook_id: 7, received_at: 1 },
        { delivery_guid: 'install', event: 'installation', hook_id: null, received_at: 1 },
      ] as never)
      .execute();
    await store.db
      .insertInto('redelivery_requests')
      .values({
        delivery_guid: 'asked',
        hook: 'repository:7',
        github_delivery_id: 40,
        event: 'workflow_run',
        action: 'completed',
        requested_at: 2,
        recovered_at: null,
      } as never)
      .execute();

    // Later migrations run after it.
    expect((await store.migrate())[0]).toBe('0010-webhook-receipts-per-hook');

    // The old rows still mean "processed through that hook" (or through any, when none is named).
    const record = (guid: string, hookId: number) =>
      recordWebhookDelivery(store.db, { guid, event: 'workflow_run', hookId }, 3);
    expect(await record('run', 7)).toBe(false);
    expect(await record('run', 8)).toBe(true);
    expect(await record('install', 9)).toBe(false);

    // The request is carried over, asked once; it is recovered once its GUID arrives on hook 7.
    const hook7 = { kind: 'repository', hookId: 7 } as const;
    const state = await findRedeliveryState(store.db, hook7, ['asked']);
    expect(state.received.size).toBe(0);
    expect(state.asked.get('asked')).toEqual({ asks: 1, askedAt: 2, githubDeliveryId: 40, gaveUp: false });
    expect(await record('asked', 8)).toBe(true);
    expect(await markRecovered(store.db, 4)).toEqual([]);
    expect(await record('asked', 7)).toBe(true);
    expect((await markRecovered(store.db, 5)).map((r) => [r.guid, r.hook])).toEqual([
      ['asked', 'repository:7'],
    ]);

    // A process of the previous version, during a rolling upgrade, still records GUIDs its way:
    // the migration only added, so its statement works, and what it wrote is read.
    const previousVersion = () =>
      store.db
        .insertInto('webhook_deliveries')
        .values({ delivery_guid: 'rolling', event: 'workflow_run', hook_id: 7, received_at: 6 })
        .onConflict((oc) => oc.column('delivery_guid').doNothing())
        .executeTakeFirst();
    expect(Number((await previousVersion()).numInsertedOrUpdatedRows)).toBe(1);
    expect(await record('rolling', 7)).toBe(false);
    expect(await record('rolling', 8)).toBe(true);
  });
});
