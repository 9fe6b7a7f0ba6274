import type { SelectQueryBuilder } from 'kysely';
import type { Database } from '../schema.js';

/** What a claim may take: how many, for how long, and of which installations. */
export interface ClaimOptions {
  owner: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** Consumer accounts (installations) whose deliveries are left for later: this worker has enough of theirs in flight. */
  skipAccounts?: readonly number[];
  /**
   * At most this many of one installation's deliveries in flight at once (unset: no cap). With
   * `inFlight`, a claim takes no more of an installation's deliveries than it has free slots.
   */
  perInstallation?: number;
  /** The claiming worker's calls in flight per consumer account (installation), where not zero. */
  inFlight?: ReadonlyMap<number, number>;
}

/** What a claim took, and what it learned of the due deliveries it left. */
export interface ClaimOutcome<T> {
  claimed: T[];
  /**
   * The claim saw every due delivery it may take and took them all: another finds nothing until a
   * delivery is created or becomes due, or a slot of one of `atCap` frees. False when that is not
   * known (PostgreSQL's claim that took rows; a claim that filled its room or read as many rows as
   * it reads).
   */
  sawAll: boolean;
  /** Installations whose due deliveries the claim left for want of a free slot (or skipped). */
  atCap: number[];
}

/**
 * How many of the oldest due deliveries a claim reads: twice what one installation can take.
 * Rows past an installation's free slots are read for nothing, and when one installation owns the
 * backlog (the usual case under load) every row past its few free slots is; reading four times the
 * pool's room made the claim 13 % of the server's CPU on SQLite. A pass that could take more is
 * followed by another straight away (the dispatch loop goes on while passes find work), so a small
 * read costs passes, not throughput.
 */
export function scanSize(options: ClaimOptions): number {
  return 2 * Math.min(options.limit, options.perInstallation ?? options.limit);
}

/** Deliveries a worker may claim at `now`: pending, due, and with no live lease. */
export const dueAndFree = <QB extends SelectQueryBuilder<Database, 'deliveries', object>>(
  qb: QB,
  now: number,
): QB =>
  qb
    .where('dispatch_state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)])) as QB;
