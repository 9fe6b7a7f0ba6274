import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import type { ClaimedDelivery } from '../store/dispatch-context.js';
import type { HandedDelivery } from './handoff.js';

/**
 * The dispatcher's pool: attempts run side by side and the pool is refilled as each one ends, so a
 * slow call holds back only its own slot. A per-installation cap keeps one slow or throttled
 * installation from filling the pool; pacing still spaces each installation's calls.
 *
 * Slots are taken three ways: by a claim (`startClaimed`), by a handoff at creation (`take` in the
 * creating transaction, then `startReserved` or `release`), and by the run follower's reads
 * (`take`, then `release`). The pool also knows whether another claim could find anything
 * (`mayClaimMore`), so the dispatch loop sleeps instead of claiming again for nothing.
 */
export interface DispatchPoolOptions {
  /** Attempts in flight at most. */
  size: number;
  /** Of those, at most this many for one consumer installation. */
  perInstallation: number;
  /** Runs an attempt; `callEnded` gives back the installation's slot when GitHub has answered. */
  run: (delivery: HandedDelivery, callEnded: () => void) => Promise<void>;
  logger: Logger;
  metrics: Pick<Metrics, 'dispatchStarted'>;
  /** Called when a call finished and the pool has room again (wakes the dispatch loop). */
  onCapacity?: () => void;
}

export interface DispatchPool {
  readonly perInstallation: number;
  /** Free slots a claim may fill now. */
  room(): number;
  /** No free slot: nothing more can start. */
  full(): boolean;
  /** What a claim leaves out: installations at their cap, and the others' calls in flight. */
  claimLimits(): { skipAccounts: number[]; inFlight: Map<number, number> };
  /** Of claimed deliveries, those their installations have slots for; the others' ids go back. */
  withinCaps<T extends { row: ClaimedDelivery }>(claimed: readonly T[]): { kept: T[]; returned: string[] };
  /**
   * A claim begins; the function it returns takes what the claim learned. A claim that saw every
   * due delivery it may take, with no hint since it began, stops further claims until a hint or a
   * freed slot of an installation it left at its cap.
   */
  beginClaim(): (learned: { sawAll: boolean; atCap: readonly number[] }) => void;
  /** Attempts a claimed delivery in a slot of its own. */
  startClaimed(delivery: HandedDelivery): Promise<void>;
  /** Takes a slot of the pool and of the installation outside a claim, when both have room. */
  take(consumerAccountId: number): boolean;
  /** Attempts handed deliveries in the slots `take` counted for them. */
  startReserved(handed: readonly HandedDelivery[]): void;
  /** Gives back slots `take` counted, waking the loop if that frees room it could use. */
  release(consumerAccountIds: readonly number[]): void;
  /** More deliveries may be waiting to be claimed. */
  hint(): void;
  mayClaimMore(): boolean;
  /** Resolves once no attempt is in flight. */
  idle(): Promise<void>;
}

export function createDispatchPool(options: DispatchPoolOptions): DispatchPool {
  const { size, perInstallation, logger, metrics } = options;
  const inFlightByAccount = new Map<number, number>();
  const running = new Set<Promise<void>>();
  /** Slots reserved by a handoff whose creating transaction is not durable yet (handoff.ts). */
  let reservedSlots = 0;
  // Whether a claim could find anything. With deliveries handed over at creation, every
  // call that ended woke a claim that found nothing, about one per delivery under load. A claim
  // that saw every due delivery it may take says so; until a hint (a delivery created or replayed)
  // or a pass of the poll, a freed slot wakes the loop only for an installation whose deliveries
  // were left for want of a slot. Hints are counted, so one that arrives while a claim is under way
  // is never overwritten by that claim's answer.
  let claimable = true;
  let leftAtCap = new Set<number>();
  let hints = 0;

  function giveBackSlot(account: number): void {
    const left = (inFlightByAccount.get(account) ?? 1) - 1;
    if (left > 0) inFlightByAccount.set(account, left);
    else inFlightByAccount.delete(account);
  }

  /** Attempts a delivery; `reserved`: its installation slot is already counted (a handoff). */
  function start(delivery: HandedDelivery, reserved: boolean): Promise<void> {
    const account = delivery.row.consumer_account_id;
    if (!reserved) inFlightByAccount.set(account, (inFlightByAccount.get(account) ?? 0) + 1);
    metrics.dispatchStarted(reserved ? 'handoff' : 'claim');
    // The installation's slot is given back when its call to GitHub ends, the pool's when the
    // attempt is recorded: the cap limits calls in flight to one installation, the pool the
    // attempts this worker holds. Measured on one busy installation, holding the slot
    // through the record's commit made the cap, not GitHub, the limit of its deliveries.
    let holdsSlot = true;
    const releaseSlot = () => {
      if (!holdsSlot) return;
      holdsSlot = false;
      giveBackSlot(account);
      if (claimable || leftAtCap.has(account)) options.onCapacity?.();
    };
    const task = options
      .run(delivery, releaseSlot)
      .catch((error: unknown) => {
        // The lease expires and another pass retries; nothing is lost.
        logger.error({ err: error, deliveryId: delivery.row.delivery_id }, 'dispatch attempt crashed');
      })
      .finally(() => {
        running.delete(task);
        if (holdsSlot) releaseSlot();
        else if (claimable || leftAtCap.size > 0) options.onCapacity?.();
      });
    running.add(task);
    return task;
  }

  return {
    perInstallation,
    room() {
      return size - running.size - reservedSlots;
    },
    full() {
      return running.size + reservedSlots >= size;
    },
    claimLimits() {
      // The in-flight counts are read as they are now; one that changes meanwhile only frees slots.
      const skipAccounts: number[] = [];
      const inFlight = new Map<number, number>();
      for (const [account, count] of inFlightByAccount) {
        if (count >= perInstallation) skipAccounts.push(account);
        else inFlight.set(account, count);
      }
      return { skipAccounts, inFlight };
    },
    withinCaps(claimed) {
      const slots = new Map<number, number>();
      const kept: (typeof claimed)[number][] = [];
      const returned: string[] = [];
      for (const one of claimed) {
        const { row } = one;
        const account = row.consumer_account_id;
        const used = slots.get(account) ?? inFlightByAccount.get(account) ?? 0;
        if (used < perInstallation) {
          slots.set(account, used + 1);
          kept.push(one);
        } else {
          returned.push(row.delivery_id);
        }
      }
      return { kept, returned };
    },
    beginClaim() {
      const hintsBefore = hints;
      return (learned) => {
        if (learned.sawAll && hints === hintsBefore) {
          claimable = false;
          leftAtCap = new Set(learned.atCap);
        } else {
          claimable = true;
        }
      };
    },
    startClaimed(delivery) {
      return start(delivery, false);
    },
    take(consumerAccountId) {
      if (running.size + reservedSlots >= size) return false;
      const inFlight = inFlightByAccount.get(consumerAccountId) ?? 0;
      if (inFlight >= perInstallation) return false;
      inFlightByAccount.set(consumerAccountId, inFlight + 1);
      reservedSlots++;
      return true;
    },
    startReserved(handed) {
      for (const delivery of handed) {
        reservedSlots--;
        void start(delivery, true);
      }
    },
    release(consumerAccountIds) {
      for (const account of consumerAccountIds) {
        reservedSlots--;
        giveBackSlot(account);
      }
      if (claimable || consumerAccountIds.some((account) => leftAtCap.has(account))) options.onCapacity?.();
    },
    hint() {
      hints++;
      claimable = true;
    },
    mayClaimMore() {
      return claimable;
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
