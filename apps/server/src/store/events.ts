import type { Kysely, QueryCreator } from 'kysely';
import { newId } from '../domain/ids.js';
import type { RunSummary } from '../domain/run-summary.js';
import { hotQuery } from './engine/compiled-query.js';
import type { Database, EventRow } from './schema.js';

/** Completion events of run keys: stored at ingestion, routed from the store. */

export interface NewEvent {
  repositoryId: number;
  runId: number;
  runAttempt: number;
  accountId: number;
  summary: RunSummary;
  routeAfter: number;
  /** The webhook span's context, continued by routing (null: not traced). */
  traceParent?: string | null;
}

/** Inserts the event of a run key; returns null when that run key was already received. */
export async function insertEvent(
  db: Kysely<Database>,
  event: NewEvent,
  now: number,
): Promise<string | null> {
  const eventId = newId('evt', now);
  const result = await insertEventQuery.execute(db, newEventParams(eventId, event, now));
  return Number(result.numAffectedRows ?? 0n) === 1 ? eventId : null;
}

/** The values of a new event's row, by the names its inserts bind them as. */
export function newEventParams(eventId: string, event: NewEvent, now: number) {
  return {
    eventId,
    repositoryId: event.repositoryId,
    runId: event.runId,
    runAttempt: event.runAttempt,
    accountId: event.accountId,
    workflowPath: event.summary.workflowPath,
    workflowName: event.summary.workflow,
    conclusion: event.summary.conclusion,
    summary: JSON.stringify(event.summary),
    now,
    routeAfter: event.routeAfter,
    traceParent: event.traceParent ?? null,
  };
}

const insertEventQuery = hotQuery(
  (
    db,
    p: {
      eventId: string;
      repositoryId: number;
      runId: number;
      runAttempt: number;
      accountId: number;
      workflowPath: string;
      workflowName: string;
      conclusion: string | null;
      summary: string;
      now: number;
      routeAfter: number;
      traceParent: string | null;
    },
  ) =>
    db
      .insertInto('events')
      .values({
        event_id: p.eventId,
        repository_id: p.repositoryId,
        run_id: p.runId,
        run_attempt: p.runAttempt,
        account_id: p.accountId,
        workflow_path: p.workflowPath,
        workflow_name: p.workflowName,
        conclusion: p.conclusion,
        summary: p.summary,
        received_at: p.now,
        route_after: p.routeAfter,
        route_status: 'pending',
        routed_at: null,
        message_id: null,
        deliveries_created: 0,
        trace_parent: p.traceParent,
      })
      .onConflict((oc) => oc.columns(['repository_id', 'run_id', 'run_attempt']).doNothing()),
);

/**
 * The next event due for routing, locked for the caller's transaction. On PostgreSQL other
 * routers skip it (`FOR UPDATE SKIP LOCKED`); SQLite serialises writers anyway.
 */
export async function takeDueEvent(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  now: number,
): Promise<EventRow | undefined> {
  let query = db
    .selectFrom('events')
    .selectAll()
    .where('route_status', '=', 'pending')
    .where('route_after', '<=', now)
    .orderBy('route_after')
    .orderBy('event_id')
    .limit(1);
  if (dialect === 'postgres') query = query.forUpdate().skipLocked();
  return query.executeTakeFirst();
}

export function getEventByRunKey(
  db: Kysely<Database>,
  runKey: { repositoryId: number; runId: number; runAttempt: number },
): Promise<EventRow | undefined> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('repository_id', '=', runKey.repositoryId)
    .where('run_id', '=', runKey.runId)
    .where('run_attempt', '=', runKey.runAttempt)
    .executeTakeFirst();
}

/** The event of a run key, row-locked until the caller's transaction ends (PostgreSQL). */
export function lockEventByRunKey(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  runKey: { repositoryId: number; runId: number; runAttempt: number },
): Promise<EventRow | undefined> {
  let query = db
    .selectFrom('events')
    .selectAll()
    .where('repository_id', '=', runKey.repositoryId)
    .where('run_id', '=', runKey.runId)
    .where('run_attempt', '=', runKey.runAttempt);
  if (dialect === 'postgres') query = query.forUpdate();
  return query.executeTakeFirst();
}

export function getEvent(db: Kysely<Database>, eventId: string): Promise<EventRow | undefined> {
  return db.selectFrom('events').selectAll().where('event_id', '=', eventId).executeTakeFirst();
}

export async function finishRouting(
  db: Kysely<Database>,
  eventId: string,
  outcome: { status: 'routed' | 'blocked'; messageId: string | null; deliveriesCreated: number },
  now: number,
): Promise<void> {
  await finishRoutingQuery.execute(db, {
    eventId,
    status: outcome.status,
    now,
    messageId: outcome.messageId,
    deliveriesCreated: outcome.deliveriesCreated,
  });
}

type FinishRoutingParams = {
  eventId: string;
  status: 'routed' | 'blocked';
  now: number;
  messageId: string | null;
  deliveriesCreated: number;
};

/** The event's route status, compiled once. */
const buildFinishRouting = (db: QueryCreator<Database>, p: FinishRoutingParams) =>
  db
    .updateTable('events')
    .set({
      route_status: p.status,
      routed_at: p.now,
      message_id: p.messageId,
      deliveries_created: p.deliveriesCreated,
    })
    .where('event_id', '=', p.eventId);

const finishRoutingQuery = hotQuery(buildFinishRouting);

/** The earliest time a pending event becomes due, to sleep exactly until then. */
export async function nextEventDueAt(db: Kysely<Database>): Promise<number | null> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.min('route_after').as('due'))
    .where('route_status', '=', 'pending')
    .executeTakeFirst();
  return row?.due ?? null;
}
