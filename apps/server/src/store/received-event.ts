import type { Kysely } from 'kysely';
import { newId } from '../domain/ids.js';
import type { RunSummary } from '../domain/run-summary.js';
import { NEW_EVENT_COUNTERS, RECEIPT_COUNTERS } from '../domain/usage.js';
import { getRepositoryAndWorkflow, runLockKey } from './accounts.js';
import type { SqlDialect } from './engine/dialect.js';
import { createStatementBatch, type StatementBatch } from './engine/statement-batches.js';
import { insertEvent } from './events.js';
import {
  type Received,
  type ReceiveParams,
  type RoutingRow,
  receiveAndCountOnPostgres,
  receiveCompletionsOnPostgres,
  receiveKeys,
} from './received-event-on-postgres.js';
import { type RoutingRead, routingReadFrom } from './routing-read.js';
import type { Database, RepositoryRow, WorkflowRow } from './schema.js';
import type { Store } from './store.js';
import { countUsages } from './usage.js';
import { APP_WEBHOOK_ID, recordWebhookDelivery } from './webhook-deliveries.js';
import { recordWorkflowSeen } from './workflows.js';

/** What a completion webhook's first step found and wrote. */
export type ReceivedCompletion =
  /** The repository is unknown, or not an enabled provider: nothing was written. */
  | { outcome: 'not-a-provider' }
  /** The GUID was processed already through this hook: nothing was written. */
  | { outcome: 'duplicate-receipt'; repository: RepositoryRow; workflow: WorkflowRow | undefined }
  /** The receipt was written; `eventId` null: the run key was received already (another GUID). */
  | {
      outcome: 'received';
      repository: RepositoryRow;
      workflow: WorkflowRow | undefined;
      eventId: string | null;
      /**
       * What routing reads of the new event, when the step read it too (PostgreSQL: after the
       * run's lock, in the same statement); undefined: routing reads it itself.
       */
      routing?: RoutingRead;
    };

/** The workflow run a completion webhook reports. */
export interface CompletionRun {
  repositoryId: number;
  runId: number;
  runAttempt: number;
  summary: RunSummary;
}

/** The webhook itself: its GUID, through which hook (null: the App's own). */
export interface CompletionDelivery {
  guid: string;
  event: string;
  hookId: number | null;
}

/** The event to store: when the router may take it up, and the trace it continues. */
export interface CompletionEvent {
  routeAfter: number;
  traceParent: string | null;
}

/**
 * A completion webhook's first step, in the caller's transaction: on PostgreSQL the run's lock
 * first (a message of this run being stored right now commits before routing reads the run's
 * message: accounts.ts, `getRepositoryLockingRun`); the run's repository and its workflow (the
 * workflow undefined when never seen: `recordWorkflowSeen` may take it as its own read); and, for
 * an enabled provider repository, the webhook's receipt (its GUID through its hook,
 * webhook-deliveries.ts) and, when the GUID is new, the run's event (events.ts) under the
 * repository's account. One statement on PostgreSQL for all the webhooks of a group
 * (received-event-on-postgres.ts), which also reads what routing needs of each new event; on
 * SQLite, whose one writer serialises transactions, three.
 */
export async function receiveCompletion(
  db: Kysely<Database>,
  dialect: SqlDialect,
  run: CompletionRun,
  delivery: CompletionDelivery,
  event: CompletionEvent,
  now: number,
): Promise<ReceivedCompletion> {
  if (dialect === 'postgres') {
    return completionReceived(
      await receiveCompletionsOnPostgres(db, receiveParams(run, delivery, event, now)),
    );
  }
  const read = await getRepositoryAndWorkflow(db, run.repositoryId, run.summary.workflowPath);
  if (!isProvider(read?.repository)) return { outcome: 'not-a-provider' };
  const { repository, workflow } = read as { repository: RepositoryRow; workflow: WorkflowRow | undefined };
  if (!(await recordWebhookDelivery(db, delivery, now))) {
    return { outcome: 'duplicate-receipt', repository, workflow };
  }
  const inserted = await insertEvent(
    db,
    {
      ...run,
      accountId: repository.account_id,
      routeAfter: event.routeAfter,
      traceParent: event.traceParent,
    },
    now,
  );
  return { outcome: 'received', repository, workflow, eventId: inserted };
}

function isProvider(repository: RepositoryRow | undefined): repository is RepositoryRow {
  return Boolean(repository?.provider_enabled) && repository?.removed_at === null;
}

/**
 * A completion webhook whose event is routed later (by the router loop: the API role, or a message
 * grace period): `receiveCompletion`, then the workflow's sighting (workflows.ts) and the usage
 * counters (domain/usage.ts, `RECEIPT_COUNTERS` and `NEW_EVENT_COUNTERS`), all committed together
 * before it resolves. On PostgreSQL that is one statement, outside any
 * transaction, shared by the webhooks of one turn of the event loop (received-event-on-postgres.ts,
 * engine/statement-batches.ts); on SQLite one transaction (its group commit shares the COMMIT).
 */
export async function receiveAndCountCompletion(
  store: Store,
  run: CompletionRun,
  delivery: CompletionDelivery,
  event: CompletionEvent,
  now: number,
): Promise<ReceivedCompletion> {
  if (store.dialect === 'postgres') {
    return completionReceived(await batchOf(store).run(receiveParams(run, delivery, event, now)));
  }
  // Its writes are all it does: it may share its group's transaction without a savepoint (store.ts).
  return store.sharedTransaction(async (trx) => {
    const received = await receiveCompletion(trx, store.dialect, run, delivery, event, now);
    if (received.outcome !== 'received') return received;
    const accountId = received.repository.account_id;
    await recordWorkflowSeen(
      trx,
      { repositoryId: run.repositoryId, path: run.summary.workflowPath, name: run.summary.workflow },
      now,
      { row: received.workflow },
    );
    const counters = received.eventId === null ? RECEIPT_COUNTERS : NEW_EVENT_COUNTERS;
    await countUsages(trx, store.dialect, accountId, counters, now);
    return received;
  });
}

/** Receptions in one statement at most: bounds its parameter and how long it holds the runs' locks. */
const MAX_RECEIVE_BATCH = 64;

const batches = new WeakMap<Store, StatementBatch<ReceiveParams, Received>>();

function batchOf(store: Store): StatementBatch<ReceiveParams, Received> {
  let batch = batches.get(store);
  if (!batch) {
    batch = createStatementBatch<ReceiveParams, Received>({
      together: (rows) => receiveAndCountOnPostgres(store.db, rows),
      alone: async (row) => (await receiveAndCountOnPostgres(store.db, [row]))[0] as Received,
      keys: receiveKeys,
      maxBatch: MAX_RECEIVE_BATCH,
      // As many as PostgreSQL's group transactions (engine/shared-transactions.ts): a busy
      // database gets fewer, larger statements.
      maxInFlight: 2,
    });
    batches.set(store, batch);
    store.drainOnClose(batch.drain);
  }
  return batch;
}

/** The row `received-event-on-postgres.ts` writes for a completion webhook. */
function receiveParams(
  run: CompletionRun,
  delivery: CompletionDelivery,
  event: CompletionEvent,
  now: number,
): ReceiveParams {
  return {
    repositoryId: run.repositoryId,
    runId: run.runId,
    runAttempt: run.runAttempt,
    runKey: runLockKey(run),
    // The event's row as insertEvent writes it (events.ts, newEventParams); its account is the
    // repository's, read by the statement.
    workflowPath: run.summary.workflowPath,
    workflowName: run.summary.workflow,
    conclusion: run.summary.conclusion,
    summary: JSON.stringify(run.summary),
    guid: delivery.guid,
    event: delivery.event,
    hookId: delivery.hookId ?? APP_WEBHOOK_ID,
    eventId: newId('evt', now),
    now,
    routeAfter: event.routeAfter,
    traceParent: event.traceParent,
  };
}

function completionReceived(received: Received & { routing?: RoutingRow }): ReceivedCompletion {
  const { repository, workflow } = received;
  if (!isProvider(repository)) return { outcome: 'not-a-provider' };
  if (!received.recorded) return { outcome: 'duplicate-receipt', repository, workflow };
  const outcome: ReceivedCompletion = {
    outcome: 'received',
    repository,
    workflow,
    eventId: received.eventId,
  };
  if (received.routing) outcome.routing = routingReadFrom(received.routing);
  return outcome;
}
