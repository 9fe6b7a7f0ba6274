import { describe, expect, it } from 'vitest';
import { TEST_STORE } from '../../../test/support/test-database.js';
import { useUnmigratedStores } from '../../../test/support/unmigrated-store.js';
import { isUniqueViolation } from '../store-errors.js';

// Runs on SQLite in the `unit` project and on PostgreSQL in the `postgres` project.
describe(`0011-recovery-turns-and-alert-errors (${TEST_STORE})`, () => {
  const emptyStore = useUnmigratedStores();

  const recovery = (recoveryId: string, subscriptionId: string, status: string) => ({
    recovery_id: recoveryId,
    subscription_id: subscriptionId,
    requested_by: 'usr_1',
    idempotency_key: null,
    states: 'failed',
    since_at: 1,
    until_at: 2,
    status,
    total: 1,
    replayed: 0,
    skipped: 0,
    position: null,
    lease_owner: 'worker-1',
    lease_expires_at: 5,
    created_at: 1,
    updated_at: 1,
    finished_at: null,
  });
  const alert = (alertId: string, lastError: string | null) => ({
    alert_id: alertId,
    account_id: 1,
    kind: 'connection.critical',
    dedup_key: alertId,
    payload: '{}',
    status: 'pending',
    attempts: 1,
    next_attempt_at: 1,
    lease_owner: null,
    lease_expires_at: null,
    last_error: lastError,
    sent_at: null,
    created_at: 1,
  });

  it('keeps the oldest running recovery of a connection, cancels the duplicates a race left, and rewrites alert errors to categories', async () => {
    const { store, migrator } = await emptyStore();
    expect((await migrator.migrateTo('0009-usage-shards')).error).toBeUndefined();
    await store.db
      .insertInto('recoveries')
      .values([
        recovery('rec_1', 'sub_a', 'running'),
        recovery('rec_2', 'sub_a', 'running'),
        recovery('rec_3', 'sub_a', 'running'),
        recovery('rec_0', 'sub_a', 'completed'),
        recovery('rec_4', 'sub_b', 'running'),
      ] as never)
      .execute();
    await store.db
      .insertInto('alerts')
      .values([
        alert('alrt_1', 'the alert receiver answered HTTP 503'),
        alert(
          'alrt_2',
          'the alert receiver could not be reached: Request cannot be constructed from a URL that includes credentials: http://ops:hunter2@alerts.example/',
        ),
        alert('alrt_3', null),
      ] as never)
      .execute();

    expect(await store.migrate()).toContain('0011-recovery-turns-and-alert-errors');

    const recoveries = await store.db
      .selectFrom('recoveries')
      .select(['recovery_id', 'status', 'lease_owner', 'turn_at'])
      .orderBy('recovery_id')
      .execute();
    expect(recoveries.map((r) => [r.recovery_id, r.status])).toEqual([
      ['rec_0', 'completed'],
      ['rec_1', 'running'],
      ['rec_2', 'cancelled'],
      ['rec_3', 'cancelled'],
      ['rec_4', 'running'],
    ]);
    expect(recoveries.find((r) => r.recovery_id === 'rec_2')?.lease_owner).toBeNull();
    expect(recoveries.every((r) => r.turn_at === null)).toBe(true);
    // From now on, the store itself refuses a second running recovery of a connection.
    const second = await store.db
      .insertInto('recoveries')
      .values(recovery('rec_5', 'sub_a', 'running') as never)
      .execute()
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(isUniqueViolation(second)).toBe(true);
    await store.db
      .insertInto('recoveries')
      .values(recovery('rec_6', 'sub_c', 'running') as never)
      .execute();

    const alerts = await store.db
      .selectFrom('alerts')
      .select(['alert_id', 'last_error'])
      .orderBy('alert_id')
      .execute();
    expect(alerts).toEqual([
      { alert_id: 'alrt_1', last_error: 'error_status' },
      { alert_id: 'alrt_2', last_error: 'unreachable' },
      { alert_id: 'alrt_3', last_error: null },
    ]);
  });
});
