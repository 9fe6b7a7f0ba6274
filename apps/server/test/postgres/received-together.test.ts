import { beforeEach, describe, expect, it } from 'vitest';
import { upsertInstalledAccount, upsertRepositories } from '../../src/store/accounts.js';
import { receiveAndCountCompletion } from '../../src/store/received-event.js';
import { openStore, type Store } from '../../src/store/store.js';
import { getUsage } from '../../src/store/usage.js';
import { recordingPostgresStore } from '../support/recording-postgres-store.js';
import { runSummary } from '../support/run-summary.js';

/**
 * On PostgreSQL the completion webhooks routed later (the API role) are received and counted by one
 * statement per turn of the event loop, with no transaction around it (store/received-event.ts,
 * engine/statement-batches.ts). The store contract checks what they write; this checks how many
 * statements they cost, that webhooks of one GUID go one after the other, that a failed statement
 * falls back to one per webhook, and that closing the store sends a pending one.
 */
const pg = recordingPostgresStore();
const statements = pg.statements;

const DAY = Date.UTC(2026, 10, 20, 12);

beforeEach(async () => {
  await upsertInstalledAccount(
    pg.store.db,
    { accountId: 1, login: 'acme', type: 'Organization', installationId: 11 },
    1,
  );
  await upsertRepositories(
    pg.store.db,
    1,
    [{ repositoryId: 10, fullName: 'acme/api', name: 'api', private: false }],
    1,
  );
  await pg.store.db.updateTable('repositories').set({ provider_enabled: true }).execute();
  statements.length = 0;
});

const receive = (s: Store, guid: string, runId: number, workflow = 'Deploy') =>
  receiveAndCountCompletion(
    s,
    { repositoryId: 10, runId, runAttempt: 1, summary: runSummary({ workflow, runId: String(runId) }) },
    { guid, event: 'workflow_run', hookId: 5 },
    { routeAfter: DAY, traceParent: null },
    DAY,
  );

const received = async (s: Store) =>
  (await getUsage(s.db, 1, '2026-11', DAY)).counters.webhookDeliveriesReceived;
const eventRuns = async (s: Store) =>
  (await s.db.selectFrom('events').select('run_id').orderBy('run_id').execute()).map((row) => row.run_id);

describe('completion webhooks received together on PostgreSQL', () => {
  it('receives the webhooks of one turn in one statement, with no transaction around it', async () => {
    const s = pg.store;
    const outcomes = await Promise.all([1, 2, 3, 4].map((run) => receive(s, `guid-${run}`, run)));
    expect(outcomes.map((o) => o.outcome)).toEqual(['received', 'received', 'received', 'received']);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^with input as/);
    expect(statements[0]).toContain('insert into usage_daily_shards');
    expect(await eventRuns(s)).toEqual([1, 2, 3, 4]);
    expect(await received(s)).toBe(4);
  });

  it('sends a GUID asked for twice in one turn in a second statement, after the first', async () => {
    const s = pg.store;
    const outcomes = await Promise.all([
      receive(s, 'guid-a', 1),
      receive(s, 'guid-b', 2),
      receive(s, 'guid-a', 3),
    ]);
    expect(outcomes.map((o) => o.outcome)).toEqual(['received', 'received', 'duplicate-receipt']);
    expect(statements).toHaveLength(2);
    expect(await eventRuns(s)).toEqual([1, 2]);
    expect(await received(s)).toBe(2);
  });

  it('receives each webhook alone when the statement fails: one bad row fails no other', async () => {
    const s = pg.store;
    // A workflow without a name breaks the workflows table's not-null name.
    const results = await Promise.allSettled([
      receive(s, 'guid-1', 1),
      receive(s, 'guid-2', 2, null as unknown as string),
      receive(s, 'guid-3', 3),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    // The statement, then one per webhook.
    expect(statements).toHaveLength(4);
    expect(await eventRuns(s)).toEqual([1, 3]);
    expect(await received(s)).toBe(2);
    const receipts = await s.db
      .selectFrom('webhook_receipts')
      .select('delivery_guid')
      .orderBy('delivery_guid')
      .execute();
    expect(receipts.map((row) => row.delivery_guid)).toEqual(['guid-1', 'guid-3']);
  });

  it('sends a pending statement before the store closes', async () => {
    const s = pg.store;
    const receiving = Promise.all([1, 2, 3].map((run) => receive(s, `guid-${run}`, run)));
    await pg.closeNow();
    expect((await receiving).map((o) => o.outcome)).toEqual(['received', 'received', 'received']);
    const reopened = await openStore({ kind: 'postgres', url: pg.url, poolSize: 1 });
    try {
      expect(await eventRuns(reopened)).toEqual([1, 2, 3]);
      expect(await received(reopened)).toBe(3);
    } finally {
      await reopened.close();
    }
  });
});
