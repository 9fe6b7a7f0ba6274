import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDeliveryOfRun } from '../../src/ingest/consumer-run-match.js';
import { upsertInstalledAccount, upsertRepositories } from '../../src/store/accounts.js';
import { connectionStats, consumerFailures, failedAttempts } from '../../src/store/connection-stats.js';
import {
  claimWithContext,
  findConsumerDelivery,
  finishAttempt,
  newDeliveryRow,
  nextDeliveryDueAt,
} from '../../src/store/deliveries/index.js';
import { listDeliveryRecords } from '../../src/store/delivery-records.js';
import { attemptRecorded } from '../../src/store/dispatch-context.js';
import { takeDueEvent } from '../../src/store/events.js';
import { notStartedOfConnection } from '../../src/store/not-started.js';
import { readQueueStats } from '../../src/store/queue-stats.js';
import {
  type ReceivedCompletion,
  receiveAndCountCompletion,
  receiveCompletion,
} from '../../src/store/received-event.js';
import { recentReplayTimes } from '../../src/store/replays.js';
import {
  deleteExpiredArchives,
  deleteExpiredDeliveries,
  deleteExpiredEvents,
  deleteOrphanedMessages,
} from '../../src/store/retention.js';
import { writeRoutedEvent } from '../../src/store/routed-event.js';
import { readRouting } from '../../src/store/routing-read.js';
import { openStore, type Store } from '../../src/store/store.js';
import { runSummary } from '../support/run-summary.js';
import { createTestDatabase } from '../support/test-database.js';

/**
 * The hot queries have indexes (issue: growth to tens of millions of records). Each statement the
 * store really sends is captured, then EXPLAINed with sequential scans disabled: if PostgreSQL
 * still has to scan the table, no index serves the query. On a tiny table the planner would pick a
 * sequential scan anyway, which is why they are switched off.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let store: Store;
const captured: Array<{ sql: string; parameters: readonly unknown[] }> = [];

beforeAll(async () => {
  database = await createTestDatabase();
  store = await openStore({
    kind: 'postgres',
    url: database.url,
    poolSize: 2,
    onQuery: (sql, parameters) => captured.push({ sql, parameters }),
  });
  await store.migrate();
  // A provider repository, so the completion webhooks the checks send are received.
  await upsertInstalledAccount(
    store.db,
    { accountId: 41, login: 'plans', type: 'Organization', installationId: 410 },
    1,
  );
  await upsertRepositories(
    store.db,
    41,
    [{ repositoryId: 10, fullName: 'plans/api', name: 'api', private: false }],
    1,
  );
  await store.db
    .updateTable('repositories')
    .set({ provider_enabled: true })
    .where('repository_id', '=', 10)
    .execute();
});

afterAll(async () => {
  await store?.close();
  await database?.drop();
});

/**
 * The plan, as JSON text, of the last statement `run` sent whose SQL matches `pick`. `generic`:
 * the plan PostgreSQL may keep for a statement prepared by name (store/engine/prepared-statements.ts)
 * after five runs, planned without the parameters' values; a partial index serves it only when the
 * statement's text states the index's predicate. `seqscans`: sequential scans left on, to see the
 * plan PostgreSQL really makes for the tables as they are (nearly empty).
 */
async function planOf(
  run: () => Promise<unknown>,
  pick: RegExp = /.*/s,
  { generic = false, seqscans = false }: { generic?: boolean; seqscans?: boolean } = {},
): Promise<string> {
  captured.length = 0;
  await run();
  const statement = [...captured].reverse().find((q) => pick.test(q.sql));
  if (!statement) throw new Error('the store sent no matching statement');
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    if (!seqscans) await client.query('set enable_seqscan = off');
    let result: pg.QueryResult;
    if (generic) {
      await client.query(`prepare picked as ${statement.sql}`);
      await client.query('set plan_cache_mode = force_generic_plan');
      const values = statement.parameters.map((value) =>
        value === null
          ? 'null'
          : client.escapeLiteral(Array.isArray(value) ? `{${value.join(',')}}` : String(value)),
      );
      result = await client.query(
        `explain (format json) execute picked${values.length > 0 ? `(${values.join(', ')})` : ''}`,
      );
    } else {
      result = await client.query(
        `explain (format json) ${statement.sql}`,
        statement.parameters as unknown[],
      );
    }
    const plan = JSON.stringify(result.rows[0]['QUERY PLAN']);
    expect(plan, `${statement.sql}\n${plan}`).not.toContain('"Seq Scan"');
    return plan;
  } finally {
    await client.end();
  }
}

/** Index names in the plan of the last statement `run` sent whose SQL matches `pick` (`planOf`). */
async function indexesUsed(
  run: () => Promise<unknown>,
  pick: RegExp = /.*/s,
  options: { generic?: boolean } = {},
): Promise<string[]> {
  const plan = await planOf(run, pick, options);
  return [...plan.matchAll(/"Index Name":"([^"]+)"/g)].map((m) => m[1]!);
}

type PlanNode = { Plans?: PlanNode[] } & Record<string, unknown>;

/**
 * The indexes `plan` scans, each marked " (whole)" when the scan has no condition: an index read
 * from end to end (a merge join's) serves no key, it only replaces a sequential scan.
 */
function indexLookups(plan: string): string[] {
  const found: string[] = [];
  const walk = (node: PlanNode) => {
    const index = node['Index Name'];
    if (typeof index === 'string') found.push(node['Index Cond'] ? index : `${index} (whole)`);
    for (const child of node.Plans ?? []) walk(child);
  };
  for (const { Plan } of JSON.parse(plan) as Array<{ Plan: PlanNode }>) walk(Plan);
  return found.sort();
}

/**
 * The index lookups of `plan` (`indexLookups`) other than the one that finds a workflow's approved
 * subscriptions, which must be there: the live ones' partial index, or, where the generic plan
 * cannot prove the status matches its predicate, the index of service and status.
 */
function lookupsBesideSubscriptions(plan: string): string[] {
  const lookups = indexLookups(plan);
  const subscriptions = lookups.filter((index) => index.startsWith('subscriptions_'));
  expect(subscriptions, plan).toHaveLength(1);
  expect(['subscriptions_live', 'subscriptions_service'], plan).toContain(subscriptions[0]);
  return lookups.filter((index) => !index.startsWith('subscriptions_'));
}

/** The unique indexes the inserts of `plan` check their conflicts against. */
function conflictArbiters(plan: string): string[] {
  return [...plan.matchAll(/"Conflict Arbiter Indexes":\[([^\]]*)\]/g)]
    .flatMap((m) => JSON.parse(`[${m[1]}]`) as string[])
    .sort();
}

describe('query plans on PostgreSQL', () => {
  const now = Date.UTC(2026, 10, 20);

  it('claims due work through the queue indexes, capped or not', async () => {
    // As the dispatcher claims: one statement, no transaction around it.
    const uncapped = { owner: 'w', now, leaseMs: 1000, limit: 20 };
    const capped = { ...uncapped, perInstallation: 4, inFlight: new Map([[2, 1]]), skipAccounts: [3] };
    for (const options of [uncapped, capped]) {
      for (const generic of [false, true]) {
        expect(
          await indexesUsed(() => claimWithContext(store.db, 'postgres', options), /^with "claimed"/, {
            generic,
          }),
        ).toContain('deliveries_due');
      }
    }
    for (const generic of [false, true]) {
      expect(await indexesUsed(() => nextDeliveryDueAt(store.db, now), /.*/s, { generic })).toEqual([
        'deliveries_due',
      ]);
    }
    expect(
      await indexesUsed(() => store.transaction((trx) => takeDueEvent(trx, 'postgres', now)), /^select/),
    ).toContain('events_pending');
  });

  it("finishes an attempt by the delivery's primary key", async () => {
    const used = await indexesUsed(
      () =>
        finishAttempt(store, {
          deliveryId: 'delivery-1',
          owner: 'w',
          attempt: {
            number: 1,
            startedAt: now,
            durationMs: 5,
            outcome: 'accepted',
            statusCode: 204,
            errorCategory: null,
            errorMessage: null,
            responseHeaders: null,
          },
          update: { dispatch_state: 'accepted' },
          awaitStartSince: now,
          dispatchCountedAt: now,
        }),
      /^with updated/,
    );
    expect(used).toContain('deliveries_pkey');
  });

  it('serves delivery status, consumer lookups, health and diagnostics from indexes', async () => {
    const listed = await indexesUsed(
      () => listDeliveryRecords(store.db, { accountIds: [1, 2], limit: 50 }),
      /from "deliveries"/,
    );
    expect(listed).toEqual(
      expect.arrayContaining(['deliveries_provider_account', 'deliveries_consumer_account']),
    );
    expect(
      await indexesUsed(() =>
        findConsumerDelivery(store.db, { correlationId: '7', consumerRepositoryId: 20 }),
      ),
    ).toContain('deliveries_correlation');
    expect(await indexesUsed(() => connectionStats(store.db, ['sub_1'], now), /"dispatched_at" >=/)).toEqual([
      'deliveries_subscription_dispatched',
    ]);
    // A connection's pending deliveries of any age: the queue's index, or the connection's on a
    // table whose statistics say it is small; either bounds the read.
    const pending = await indexesUsed(() => connectionStats(store.db, ['sub_1'], now), /"dispatch_state" =/);
    expect(pending).toHaveLength(1);
    expect(['deliveries_due', 'deliveries_subscription_dispatched']).toContain(pending[0]);
    // The last event of a quiet connection.
    expect(await indexesUsed(() => connectionStats(store.db, ['sub_1'], now), /desc/)).toEqual([
      'deliveries_subscription_dispatched',
    ]);
  });

  it("finds a consumer run's delivery and a dispatch in flight to its repository from partial indexes", async () => {
    const find = () =>
      findDeliveryOfRun(store.db, {
        repositoryId: 20,
        runId: 5,
        event: 'workflow_dispatch',
        now: () => now,
        waitMs: 1_000,
      });
    expect(await indexesUsed(find, /"consumer_run_id" =/)).toEqual(['deliveries_consumer_run']);
    expect(await indexesUsed(find, /"lease_expires_at" >/)).toEqual(['deliveries_due']);
  });

  it("reads a delivery's recent replays by its event or its connection's last hour", async () => {
    // Either bounds the read; which is cheaper depends on the table's statistics.
    const used = await indexesUsed(() =>
      recentReplayTimes(store.db, { event_id: 'evt_1', subscription_id: 'sub_1' }, now - 1000),
    );
    expect(used).toHaveLength(1);
    expect(['deliveries_event', 'deliveries_subscription_dispatched']).toContain(used[0]);
  });

  it("reads a connection's failed attempts from the window's attempts, never its deliveries", async () => {
    // Both of diagnostics' statements (counts per category and the newest few) start from the
    // attempts of that connection in the window and touch no delivery: with years of history, the
    // join from the connection's deliveries read every attempt they ever had.
    for (const pick of [/group by/, /order by/]) {
      const used = await indexesUsed(() => failedAttempts(store.db, 'sub_1', now - 1000, 10), pick);
      expect(used).toEqual(['delivery_attempts_subscription']);
      const statement = captured.find((q) => pick.test(q.sql));
      expect(statement?.sql).not.toMatch(/"deliveries"/);
    }
  });

  it("counts a connection's never-started deliveries and its consumer's failures from partial indexes", async () => {
    for (const pick of [/group by/, /order by/]) {
      expect(
        await indexesUsed(() => notStartedOfConnection(store.db, 'sub_1', now - 1000, 10), pick),
      ).toEqual(['deliveries_not_started']);
    }
    expect(await indexesUsed(() => consumerFailures(store.db, 'sub_1', now - 1000))).toEqual([
      'deliveries_consumer_failure',
    ]);
  });

  it("reads /metrics' queue gauges and the reclaimed-lease check from indexes", async () => {
    expect(await indexesUsed(() => readQueueStats(store.db, now), /group by/)).toEqual(['deliveries_due']);
    expect(await indexesUsed(() => readQueueStats(store.db, now), /awaiting_start_since/)).toEqual([
      'deliveries_awaiting_start',
    ]);
    expect(await indexesUsed(() => readQueueStats(store.db, now), /next_attempt_at/)).toEqual([
      'deliveries_due',
    ]);
    expect(await indexesUsed(() => attemptRecorded(store.db, 'delivery-1', 1))).toEqual([
      'delivery_attempts_number',
    ]);
  });

  it('finds expired rows for the retention sweeper through indexes', async () => {
    // Deliveries and events by their primary keys, UUIDv7s of their creation times.
    expect(await indexesUsed(() => deleteExpiredDeliveries(store.db, now, 500), /^select/)).toEqual([
      'deliveries_pkey',
    ]);
    expect(await indexesUsed(() => deleteExpiredEvents(store.db, now, 500), /^select/)).toEqual(
      expect.arrayContaining(['events_pkey', 'deliveries_event']),
    );
    expect(await indexesUsed(() => deleteExpiredArchives(store.db, now, 500), /^select/)).toContain(
      'archives_expires',
    );
    expect(await indexesUsed(() => deleteOrphanedMessages(store.db, now, 500), /^select/)).toContain(
      'messages_status_received',
    );
  });

  // Completion webhooks' statements on PostgreSQL: each is one statement for any number of runs,
  // their rows a JSON recordset the planner takes for 100 rows, so what matters is that each row
  // is found by its key, never that a table is read whole once.
  const path = '.github/workflows/deploy.yml';
  const summary = runSummary({ workflowPath: path });
  let runs = 100;
  /** A completion webhook received as the webhook route receives it, on `on` (default: the store). */
  const receiveOn = (on: Store, guid: string): Promise<ReceivedCompletion> =>
    on.transaction((trx) =>
      receiveCompletion(
        trx,
        'postgres',
        { repositoryId: 10, runId: runs++, runAttempt: 1, summary },
        { guid, event: 'workflow_run', hookId: 5 },
        { routeAfter: now, traceParent: null },
        now,
      ),
    );
  /** A new completion webhook's event. */
  const receive = async (): Promise<string> => {
    const received = await receiveOn(store, `guid-${runs}`);
    if (received.outcome !== 'received' || received.eventId === null) throw new Error('no new event');
    return received.eventId;
  };

  it("locks a run, reads its repository and workflow, records the webhook's receipt and event, and reads what routing needs, each by its key", async () => {
    for (const generic of [false, true]) {
      const plan = await planOf(receive, /pg_advisory_xact_lock/, { generic });
      // The run's message, read by the function with a snapshot of its own (its plan: below).
      expect(captured.find((q) => /pg_advisory_xact_lock/.test(q.sql))?.sql).toContain('zekt_run_message(');
      // The workflow's routable subscriptions, as routing's own read finds them (below).
      expect(lookupsBesideSubscriptions(plan), plan).toEqual([
        'accounts_pkey',
        'repositories_pkey',
        'repositories_pkey',
        'services_workflow',
        'webhook_deliveries_pkey',
        'workflows_pk',
      ]);
      expect(conflictArbiters(plan), plan).toEqual(['events_run_key', 'webhook_receipts_pk']);
    }
  });

  it("reads a run's message in zekt_run_message by the run's key", async () => {
    // The function's query is planned when it is called, out of the statement's EXPLAIN: its own.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query('set enable_seqscan = off');
      const { rows } = await client.query<{ prosrc: string; provolatile: string }>(
        "select prosrc, provolatile from pg_proc where proname = 'zekt_run_message'",
      );
      // Volatile: a snapshot of its own, taken after the run's lock (migration 0019).
      expect(rows.map((row) => row.provolatile)).toEqual(['v']);
      await client.query(`prepare message_read(bigint, bigint, integer) as ${rows[0]?.prosrc}`);
      const plan = await client.query('explain (format json) execute message_read(10, 77, 1)');
      expect(indexLookups(JSON.stringify(plan.rows[0]['QUERY PLAN']))).toEqual(['messages_run_key']);
    } finally {
      await client.end();
    }
  });

  it('receives and counts a webhook routed later (the API role) with the same lookups, and upserts by key', async () => {
    const receiveAndCount = () => {
      const runId = runs++;
      return receiveAndCountCompletion(
        store,
        { repositoryId: 10, runId, runAttempt: 1, summary },
        { guid: `guid-counted-${runId}`, event: 'workflow_run', hookId: 5 },
        { routeAfter: now, traceParent: null },
        now,
      );
    };
    for (const generic of [false, true]) {
      const plan = await planOf(receiveAndCount, /insert into usage_daily_shards/, { generic });
      expect(indexLookups(plan), plan).toEqual([
        'repositories_pkey',
        'webhook_deliveries_pkey',
        'workflows_pk',
      ]);
      expect(conflictArbiters(plan), plan).toEqual([
        'events_run_key',
        'usage_daily_shards_pk',
        'webhook_receipts_pk',
        'workflows_pk',
      ]);
    }
  });

  it("reads a run's message and its workflow's routable subscriptions by their indexes", async () => {
    const run = { repositoryId: 10, runId: 77, runAttempt: 1, workflowPath: path };
    for (const generic of [false, true]) {
      const plan = await planOf(
        () => store.transaction((trx) => readRouting(trx, 'postgres', run, true)),
        /json_to_recordset/,
        { generic },
      );
      expect(lookupsBesideSubscriptions(plan), plan).toEqual([
        'accounts_pkey',
        'messages_run_key',
        'repositories_pkey',
        'services_workflow',
      ]);
    }
  });

  const routed = async (on: Store = store) => {
    const eventId = await receive();
    await on.transaction((trx) =>
      writeRoutedEvent(
        trx,
        'postgres',
        {
          eventId,
          summaryJson: JSON.stringify(summary),
          payloadJson: '{"a":1}',
          payloadBytes: 7,
          archiveExpiresAt: now + 1_000,
          messageId: null,
        },
        [
          newDeliveryRow(
            {
              deliveryId: `delivery-of-${eventId}`,
              eventId,
              subscriptionId: 'sub_1',
              serviceId: 'svc_1',
              providerAccountId: 1,
              providerRepositoryId: 10,
              consumerAccountId: 2,
              consumerRepositoryId: 20,
              correlationId: '77',
              runAttempt: 1,
              eventType: 'deployed',
              durable: true,
            },
            now,
          ),
        ],
        now,
        { accountId: 2, day: '2026-11-20', counters: ['dispatchApiCalls'] },
      ),
    );
  };
  const routedWrites = /^with archive as/;

  it("marks a routed event by its primary key as it writes the event's archive, deliveries and usage", async () => {
    const plan = await planOf(routed, routedWrites);
    expect(indexLookups(plan), plan).toEqual(['events_pkey']);
    expect(conflictArbiters(plan), plan).toEqual(['usage_daily_shards_pk']);
  });

  /** An attempt finished through the dispatcher's batch (no delivery of that id: nothing updated). */
  const finishedAlone = (on: Store = store) =>
    finishAttempt(on, {
      deliveryId: 'delivery-none',
      owner: 'w',
      attempt: null,
      update: { next_attempt_at: now, updated_at: now },
    });
  const sharedByAGroup = /zekt_rows/;

  it('plans the statements a group shares once, as a lookup by primary key while the tables are nearly empty', async () => {
    // With sequential scans allowed, on tables of a few rows: PostgreSQL's own recordset functions,
    // taken for 100 rows, made the planner read the table whole here, and a prepared statement kept
    // that plan as the table grew.
    const keys: Array<[() => Promise<unknown>, string]> = [
      [routed, 'events_pkey'],
      [finishedAlone, 'deliveries_pkey'],
    ];
    for (const [run, key] of keys) {
      for (const generic of [false, true]) {
        const plan = await planOf(run, sharedByAGroup, { generic, seqscans: true });
        expect(indexLookups(plan), plan).toContain(key);
      }
    }

    // Its custom plans cost what its generic plan costs, so after PostgreSQL's five custom plans a
    // connection keeps the generic one and stops planning. One connection: pg_prepared_statements
    // describes the session the statements ran on.
    const alone = await openStore({ kind: 'postgres', url: database.url, poolSize: 1 });
    try {
      for (let i = 0; i < 8; i++) {
        await routed(alone);
        await finishedAlone(alone);
      }
      const { rows } = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
        select statement, generic_plans, custom_plans from pg_prepared_statements
        where statement like '%zekt\\_rows(%'`.execute(alone.db);
      const shared = rows.filter((row) => !row.statement.includes('pg_prepared_statements'));
      expect(shared).toHaveLength(2);
      for (const row of shared) {
        expect([row.custom_plans, row.generic_plans], row.statement).toEqual([5, 3]);
      }
    } finally {
      await alone.close();
    }
  });
});
