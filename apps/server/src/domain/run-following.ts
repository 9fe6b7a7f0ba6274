import { DAY_MS, MINUTE_MS, SECOND_MS } from './duration.js';
import { JITTER_RATIO, MAX_RETRY_DELAY_MS, requestedDelayMs } from './retry-schedule.js';

/**
 * Following a consumer run. A `workflow_dispatch` answered with the run's id tells Zekt
 * which run its delivery started: the delivery has started (no wait, no "not started" guess), and
 * how it ends is that run's conclusion. With completion tracking on, the run's `workflow_run`
 * webhooks say so, matched by the run id; without it, Zekt reads the run itself
 * (`GET /repos/{owner}/{repo}/actions/runs/{run_id}`) on the schedule below, within the consumer
 * installation's pace, until the run ends. Each read is one API call of the installation's: the
 * default schedule reads a run that lasts one minute 5 times, ten minutes 8 times, an hour 11 times
 * (7 reads in the first 9 minutes, then one every 15 minutes).
 */

/**
 * Whether Zekt follows the run GitHub named for a delivery it just accepted: a durable delivery
 * whose repository has no completion tracking (with it, the run's webhooks report it).
 * @example followsRun({ durable: true, runKnown: true, completionTracking: false }) // true
 */
export function followsRun(delivery: {
  durable: boolean;
  runKnown: boolean;
  completionTracking: boolean;
}): boolean {
  return delivery.runKnown && delivery.durable && !delivery.completionTracking;
}

/**
 * Delays before each read of a followed run, from GitHub's answer; the last one repeats. Runs
 * that take seconds are seen ending within seconds, hour-long ones cost four reads an hour.
 */
export const DEFAULT_RUN_FOLLOW_SCHEDULE_MS = [
  5 * SECOND_MS,
  10 * SECOND_MS,
  15 * SECOND_MS,
  20 * SECOND_MS,
  MINUTE_MS,
  2 * MINUTE_MS,
  5 * MINUTE_MS,
  15 * MINUTE_MS,
] as const;

/** GitHub ends a workflow run after 35 days; a run still not over then is no longer followed. */
export const RUN_FOLLOW_MAX_MS = 35 * DAY_MS;

/** Statuses of a run that a runner has not picked up yet (GitHub's `status` of a workflow run). */
const NOT_STARTED_STATUSES = new Set(['queued', 'requested', 'pending']);

/**
 * When to read the run again, after `reads` reads: the schedule's delay (the last one repeating),
 * ±20 % jitter, or longer when GitHub asked for it (`Retry-After`, a spent rate limit).
 * @example nextRunReadAt({ reads: 0, now: 0, random: () => 0.5 }) // 5_000
 */
export function nextRunReadAt(input: {
  /** Reads made so far (0: the first read is being scheduled). */
  reads: number;
  now: number;
  schedule?: readonly number[] | undefined;
  headers?: Record<string, string | undefined> | undefined;
  random?: (() => number) | undefined;
}): number {
  const schedule = input.schedule ?? DEFAULT_RUN_FOLLOW_SCHEDULE_MS;
  const base = schedule[Math.min(input.reads, schedule.length - 1)] ?? 0;
  const random = input.random ?? Math.random;
  const jittered = base * (1 - JITTER_RATIO + 2 * JITTER_RATIO * random());
  const asked = requestedDelayMs(input.headers ?? {}, input.now) ?? 0;
  return input.now + Math.round(Math.min(MAX_RETRY_DELAY_MS, Math.max(jittered, asked)));
}

/** What one read of the run found. */
export type RunObservation =
  | { found: true; status: string; conclusion: string | null }
  /** GitHub answered 404: the run was deleted. */
  | { found: false };

/** What a read (or a `workflow_run` webhook of the run) means for the delivery. */
export type RunReport =
  /** Still queued: nothing changes. */
  | { kind: 'none' }
  /** A runner took it: the delivery is Confirmed. */
  | { kind: 'confirm' }
  /** It ended: Completed on success, otherwise Failed naming why (`failureReason`). */
  | { kind: 'complete'; success: boolean; failureReason?: string };

/**
 * A run's status and conclusion as a consumer report: Confirmed once it left the queue, Completed
 * when it ended in `success`, Failed with the conclusion otherwise (`cancelled`, `failure`,
 * `timed_out`, …) or when it was deleted.
 * @example reportOfRun({ found: true, status: 'completed', conclusion: 'cancelled' })
 *   // { kind: 'complete', success: false, failureReason: 'consumer_run_cancelled' }
 */
export function reportOfRun(run: RunObservation): RunReport {
  if (!run.found) return { kind: 'complete', success: false, failureReason: runFailureReason('deleted') };
  if (run.status === 'completed') {
    return run.conclusion === 'success'
      ? { kind: 'complete', success: true }
      : { kind: 'complete', success: false, failureReason: runFailureReason(run.conclusion ?? 'unknown') };
  }
  return NOT_STARTED_STATUSES.has(run.status) ? { kind: 'none' } : { kind: 'confirm' };
}

/**
 * The `failureReason` of a delivery whose consumer run did not succeed: `consumer_run_` and
 * GitHub's conclusion, or `consumer_run_deleted`.
 * @example runFailureReason('timed_out') // 'consumer_run_timed_out'
 */
export function runFailureReason(conclusion: string): string {
  return `consumer_run_${conclusion.replace(/[^a-z_]/g, '_')}`;
}

/** Why a followed run stopped being read before it ended. */
export const RUN_FOLLOW_EXPIRED = 'consumer_run_not_finished';

/** Whether a run followed since `since` has been followed for as long as a run can last. */
export function followExpired(since: number, now: number): boolean {
  return now - since >= RUN_FOLLOW_MAX_MS;
}
