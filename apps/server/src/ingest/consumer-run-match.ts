import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

/**
 * Which delivery a consumer run belongs to, by the run's id: GitHub named the run in
 * its answer to the delivery's `workflow_dispatch`, and the dispatcher recorded it with the
 * delivery. GitHub may send the run's first `workflow_run` webhooks before that answer is
 * recorded (the dispatcher commits it a few milliseconds after GitHub answered), so a
 * `workflow_dispatch` run no delivery names yet, in a repository with a `workflow_dispatch` to it in
 * flight, is looked up again for a few seconds before it is taken for a run Zekt did not start.
 * GitHub waits 10 s for a webhook's answer; the wait stays well inside that.
 */
export const RUN_MATCH_WAIT_MS = 5_000;
const RUN_MATCH_POLL_MS = 50;

export async function findDeliveryOfRun(
  db: Kysely<Database>,
  input: {
    repositoryId: number;
    runId: number;
    /** The run's `event`: only a `workflow_dispatch` run can be waiting for its dispatch's record. */
    event: string;
    now: () => number;
    waitMs?: number;
  },
): Promise<{ deliveryId: string } | undefined> {
  const lookup = () =>
    db
      .selectFrom('deliveries')
      .select('delivery_id')
      .where('consumer_repository_id', '=', input.repositoryId)
      .where('consumer_run_id', '=', input.runId)
      .executeTakeFirst();
  const found = await lookup();
  if (found || input.event !== 'workflow_dispatch') return found && { deliveryId: found.delivery_id };
  const deadline = input.now() + (input.waitMs ?? RUN_MATCH_WAIT_MS);
  while (input.now() < deadline && (await dispatchInFlight(db, input.repositoryId, input.now()))) {
    await sleep(RUN_MATCH_POLL_MS);
    const later = await lookup();
    if (later) return { deliveryId: later.delivery_id };
  }
  // The dispatch may have been recorded between the last lookup and the in-flight check that found
  // nothing pending any more (its answer and its state commit together): look once more.
  const last = await lookup();
  return last && { deliveryId: last.delivery_id };
}

/** Whether a worker holds a live lease on an unanswered dispatch to the repository right now. */
async function dispatchInFlight(db: Kysely<Database>, repositoryId: number, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('deliveries')
    .select('delivery_id')
    .where('dispatch_state', '=', 'pending')
    .where('consumer_repository_id', '=', repositoryId)
    .where('lease_expires_at', '>', now)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
