import type { DeliveryStatus } from './delivery-state.js';
import { DAY_MS } from './duration.js';

/**
 * Bulk recovery: "replay every failed delivery of this connection since T". The
 * rules of a recovery's window, the delivery states it may take, and how it is worked through.
 */

/** Archived payloads live 90 days (retention.ts); a longer window would only find expired ones. */
export const MAX_RECOVERY_WINDOW_MS = 90 * DAY_MS;

/**
 * Which deliveries a recovery replays, by the name the API gives the state: the delivery status a
 * candidate has, and whether it must be flagged not started (a Dispatched delivery no workflow
 * picked up, domain/not-started.ts; one confirmed since then is Confirmed and no longer a candidate).
 */
export const RECOVERABLE_STATES = {
  failed: { status: 'Failed', notStarted: false },
  not_started: { status: 'Dispatched', notStarted: true },
} as const satisfies Record<string, { status: DeliveryStatus; notStarted: boolean }>;
export type RecoverableState = keyof typeof RECOVERABLE_STATES;
export const DEFAULT_RECOVERY_STATES: RecoverableState[] = ['failed'];

/** Deliveries replayed per transaction-by-transaction pass before the job lets other work in. */
export const RECOVERY_BATCH = 50;
/** How long a worker holds a recovery without renewing; a dead worker's job is taken over after it. */
export const RECOVERY_LEASE_MS = 30_000;

/** What a worker knows of a running recovery when it chooses the next one to work on. */
export interface RecoveryTurnCandidate {
  recoveryId: string;
  /** When a worker last started a batch of it; null: never. */
  turnAt: number | null;
  createdAt: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
}

/**
 * The running recoveries a worker may work on next, one batch at a time, in the order it tries to
 * take them: those free (never leased, or the lease expired) or already its own, the one whose
 * last batch started longest ago first — one never started counts from its creation — and the
 * older one when two are even. Every running recovery of every connection gets a batch in turn: a
 * recovery of 90 days of failures no longer holds another tenant's recovery of an hour behind it
 * until it ends. A worker that loses the first to another worker takes the next.
 *
 * @example recoveryTurns([{ recoveryId: 'a', turnAt: 5, createdAt: 1, leaseOwner: 'w', leaseExpiresAt: 9 },
 *   { recoveryId: 'b', turnAt: null, createdAt: 3, leaseOwner: null, leaseExpiresAt: null }], 'w', 6) // [b, a]
 */
export function recoveryTurns<T extends RecoveryTurnCandidate>(
  running: readonly T[],
  owner: string,
  now: number,
): T[] {
  const waitingSince = (r: T) => r.turnAt ?? r.createdAt;
  return running
    .filter((r) => r.leaseOwner === owner || r.leaseExpiresAt === null || r.leaseExpiresAt <= now)
    .sort(
      (a, b) =>
        waitingSince(a) - waitingSince(b) ||
        (a.recoveryId < b.recoveryId ? -1 : a.recoveryId > b.recoveryId ? 1 : 0),
    );
}

export type WindowCheck = { ok: true } | { ok: false; reason: string };

/**
 * A recovery window starts in the past, at most 90 days ago, and ends when the recovery is made.
 *
 * @example checkRecoveryWindow(Date.parse('2026-01-01'), Date.parse('2026-01-02')) // { ok: true }
 */
export function checkRecoveryWindow(sinceMs: number, nowMs: number): WindowCheck {
  if (sinceMs > nowMs) return { ok: false, reason: 'since is in the future: give a time in the past' };
  if (nowMs - sinceMs > MAX_RECOVERY_WINDOW_MS) {
    return {
      ok: false,
      reason:
        'since is more than 90 days ago: archived payloads are kept 90 days, so older deliveries cannot be replayed',
    };
  }
  return { ok: true };
}

export function isRecoverableState(value: string): value is RecoverableState {
  return Object.hasOwn(RECOVERABLE_STATES, value);
}
