import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import {
  decideRedelivery,
  failedWebhooks,
  GITHUB_DELIVERY_KEPT_MS,
  type ListedDelivery,
  MAX_DELIVERY_PAGES,
  MAX_REDELIVERY_ASKS,
  REDELIVERY_REQUEST_KEPT_MS,
  type ReconciledWebhook,
  type ReconcileFailureKind,
  reconcileBackoff,
  webhookKey,
} from '../domain/reconcile.js';
import { GitHubApiError, type GitHubClient, type WebhookRef } from '../github/github-client.js';
import { listPlacedHooks } from '../store/hooks.js';
import { withLease } from '../store/leases.js';
import {
  deleteOldRedeliveryRequests,
  findRedeliveryState,
  markGivenUp,
  markRecovered,
  type RedeliveryRequest,
  recordRedeliveryRequest,
} from '../store/redelivery-requests.js';
import type { Store } from '../store/store.js';

/**
 * Finds webhooks GitHub failed to deliver to Zekt and asks GitHub to send them again:
 * lists the recent deliveries of every hook Zekt placed and of the App's hook, and requests a
 * redelivery of each failed one Zekt has not received through that hook — once, and again, bounded
 * and backing off, when the redelivery failed too (domain/reconcile.ts `decideRedelivery`). A
 * redelivery keeps its `X-GitHub-Delivery` GUID, so ingestion's idempotency (GUID and hook) routes
 * it once however often it comes.
 */
export interface WebhookCheck {
  /** e.g. `the App webhook`, `acme/api provider webhook 123`. */
  webhook: string;
  outcome: 'checked' | 'refused' | 'backing_off';
  /** Deliveries GitHub listed, failed webhooks among them, redeliveries asked for now. */
  listed: number;
  failed: number;
  requested: number;
  /** Redeliveries given up in this pass: the last ask allowed failed too. */
  gaveUp: number;
  /** Set when GitHub refused (or the webhook is still being left alone). */
  problem?: { kind: ReconcileFailureKind; message: string; retryAt: string };
}

/** A redelivery asked for in a pass: `ask` 1 the first time, up to `MAX_REDELIVERY_ASKS`. */
export type AskedRedelivery = RedeliveryRequest & { ask: number };

export interface ReconcileReport {
  webhooks: WebhookCheck[];
  /** Redeliveries asked for in this pass. */
  requested: AskedRedelivery[];
  /** Redeliveries whose last allowed ask failed too, found in this pass: Zekt stops asking. */
  gaveUp: RedeliveryRequest[];
  /** Redeliveries asked for (now or earlier) whose webhook has arrived since. */
  recovered: RedeliveryRequest[];
  /** False when another process was reconciling and did not finish in time. */
  ran: boolean;
}

export interface Reconciler {
  /**
   * One pass. With `waitForRecoveryMs`, waits up to that long for the redeliveries asked for to
   * arrive, so the report can say they were recovered (`zekt reconcile` does).
   */
  reconcile(options?: { waitForRecoveryMs?: number; leaseWaitMs?: number }): Promise<ReconcileReport>;
}

export interface ReconcilerOptions {
  store: Store;
  clock: Clock;
  github: GitHubClient;
  logger: Logger;
  /** Names this process in the reconciler's lease. */
  owner: string;
}

const LEASE_TTL_MS = 10 * 60_000;

interface Target {
  webhook: ReconciledWebhook;
  key: string;
  name: string;
  ref: WebhookRef;
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const { store, clock, github, logger } = options;
  /** Webhooks GitHub refused lately: left alone until `until`. */
  const backoffs = new Map<
    string,
    { failures: number; until: number; kind: ReconcileFailureKind; message: string }
  >();

  async function targets(): Promise<Target[]> {
    const hooks = await listPlacedHooks(store.db);
    return [
      { webhook: { kind: 'app' }, key: 'app', name: 'the App webhook', ref: { kind: 'app' } },
      ...hooks.map((hook): Target => {
        const [owner = '', repo = ''] = hook.fullName.split('/');
        const webhook: ReconciledWebhook = { kind: 'repository', hookId: hook.hookId };
        return {
          webhook,
          key: webhookKey(webhook),
          name: `${hook.fullName} ${hook.role} webhook ${hook.hookId}`,
          ref: { kind: 'repository', installationId: hook.installationId, owner, repo, hookId: hook.hookId },
        };
      }),
    ];
  }

  async function listRecent(target: Target): Promise<ListedDelivery[]> {
    const oldest = clock.now() - GITHUB_DELIVERY_KEPT_MS;
    const all: ListedDelivery[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < MAX_DELIVERY_PAGES; page++) {
      const { deliveries, nextCursor } = await github.listHookDeliveries(target.ref, cursor);
      all.push(...deliveries);
      const last = deliveries[deliveries.length - 1];
      if (nextCursor === null || last === undefined || Date.parse(last.deliveredAt) < oldest) break;
      cursor = nextCursor;
    }
    return all;
  }

  function refused(target: Target, error: unknown, check: WebhookCheck): WebhookCheck {
    const failure =
      error instanceof GitHubApiError
        ? { status: error.status, headers: error.headers, message: error.message }
        : { status: undefined, headers: {}, message: error instanceof Error ? error.message : String(error) };
    const failures = (backoffs.get(target.key)?.failures ?? 0) + 1;
    const backoff = reconcileBackoff(failure, failures, clock.now());
    backoffs.set(target.key, {
      failures,
      until: backoff.until,
      kind: backoff.kind,
      message: failure.message,
    });
    const retryAt = new Date(backoff.until).toISOString();
    logger.warn(
      { webhook: target.name, status: failure.status, kind: backoff.kind, retryAt },
      `reconciling ${target.name}: ${failure.message}; leaving it alone until ${retryAt}`,
    );
    return {
      ...check,
      outcome: 'refused',
      problem: { kind: backoff.kind, message: failure.message, retryAt },
    };
  }

  async function check(
    target: Target,
    requested: AskedRedelivery[],
    gaveUp: RedeliveryRequest[],
  ): Promise<WebhookCheck> {
    const base: WebhookCheck = {
      webhook: target.name,
      outcome: 'checked',
      listed: 0,
      failed: 0,
      requested: 0,
      gaveUp: 0,
    };
    const backoff = backoffs.get(target.key);
    if (backoff !== undefined && backoff.until > clock.now()) {
      return {
        ...base,
        outcome: 'backing_off',
        problem: {
          kind: backoff.kind,
          message: backoff.message,
          retryAt: new Date(backoff.until).toISOString(),
        },
      };
    }
    let listed: ListedDelivery[];
    try {
      listed = await listRecent(target);
    } catch (error) {
      return refused(target, error, base);
    }
    const failed = failedWebhooks(listed, clock.now(), target.webhook.kind);
    const state = await findRedeliveryState(
      store.db,
      target.webhook,
      failed.map((delivery) => delivery.guid),
    );
    const result: WebhookCheck = { ...base, listed: listed.length, failed: failed.length };
    for (const delivery of failed) {
      if (state.received.has(delivery.guid)) continue;
      const previous = state.asked.get(delivery.guid);
      const request: RedeliveryRequest = {
        guid: delivery.guid,
        hook: target.key,
        githubDeliveryId: delivery.id,
        event: delivery.event,
        action: delivery.action,
      };
      const decision = decideRedelivery(delivery, previous, clock.now());
      if (decision.decision === 'wait') continue;
      if (decision.decision === 'give_up') {
        if (previous?.gaveUp || !(await markGivenUp(store.db, request, clock.now()))) continue;
        gaveUp.push(request);
        result.gaveUp += 1;
        logger.warn(
          { webhook: target.name, guid: delivery.guid, event: delivery.event },
          `${delivery.event} ${delivery.guid} of ${target.name} failed again after ${MAX_REDELIVERY_ASKS} redeliveries; no longer asking: redeliver it on GitHub once the cause is fixed`,
        );
        continue;
      }
      try {
        await github.redeliverHookDelivery(target.ref, delivery.id);
      } catch (error) {
        return refused(target, error, result);
      }
      await recordRedeliveryRequest(store.db, request, clock.now());
      const ask = (previous?.asks ?? 0) + 1;
      requested.push({ ...request, ask });
      result.requested += 1;
      logger.info(
        { webhook: target.name, guid: delivery.guid, event: delivery.event, ask },
        `asked GitHub to redeliver ${delivery.event} ${delivery.guid} of ${target.name} (ask ${ask} of ${MAX_REDELIVERY_ASKS})`,
      );
    }
    backoffs.delete(target.key);
    return result;
  }

  async function pass(waitForRecoveryMs: number): Promise<Omit<ReconcileReport, 'ran'>> {
    const recovered = await markRecovered(store.db, clock.now());
    const requested: AskedRedelivery[] = [];
    const gaveUp: RedeliveryRequest[] = [];
    const webhooks: WebhookCheck[] = [];
    for (const target of await targets()) webhooks.push(await check(target, requested, gaveUp));
    // GitHub answers 202 and sends afterwards: wait a little for what was asked for now.
    const deadline = Date.now() + waitForRecoveryMs;
    const key = (request: RedeliveryRequest) => `${request.hook} ${request.guid}`;
    const pending = new Set(requested.map(key));
    while (pending.size > 0) {
      for (const request of await markRecovered(store.db, clock.now())) {
        recovered.push(request);
        pending.delete(key(request));
      }
      if (pending.size === 0 || Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await deleteOldRedeliveryRequests(store.db, clock.now() - REDELIVERY_REQUEST_KEPT_MS);
    return { webhooks, requested, gaveUp, recovered };
  }

  return {
    async reconcile(runOptions = {}) {
      const outcome = await withLease(
        store.db,
        {
          name: 'reconciler',
          owner: options.owner,
          ttlMs: LEASE_TTL_MS,
          waitMs: runOptions.leaseWaitMs ?? 0,
          now: () => clock.now(),
        },
        () => pass(runOptions.waitForRecoveryMs ?? 0),
      );
      if (!outcome.acquired) return { webhooks: [], requested: [], gaveUp: [], recovered: [], ran: false };
      return { ...outcome.value, ran: true };
    },
  };
}
