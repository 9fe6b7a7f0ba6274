import { applyConsumerReport } from '../delivery/consumer-transitions.js';
import { runFailureReason } from '../domain/run-following.js';
import { getRepository } from '../store/accounts.js';
import { getDelivery } from '../store/deliveries/index.js';
import { markRunSeen } from '../store/not-started.js';
import type { RepositoryHookRow } from '../store/schema.js';
import { countUsage } from '../store/usage.js';
import { recordWebhookDelivery } from '../store/webhook-deliveries.js';
import { findDeliveryOfRun } from './consumer-run-match.js';
import type { WebhookIngestOptions, WebhookOutcome } from './webhook-types.js';

/**
 * Completion tracking: `workflow_run` events of a consumer repository, through the hook
 * the COMPLETION switch placed. A run is a delivery's when GitHub named it in its answer to the
 * delivery's `workflow_dispatch` (matched by `workflow_run.id`, consumer-run-match.ts), or when its
 * `display_title` names the delivery (the recommended
 * `run-name: "zekt ${{ github.event.client_payload.zekt.deliveryId }}"`, and for a GitHub that does
 * not answer with the run, `"zekt ${{ fromJSON(inputs.zekt).deliveryId }}"`). The run confirms
 * that delivery when it starts and completes it when it ends. Its `requested` event (the run is
 * queued) already shows the workflow exists, so the delivery is no longer awaited
 * (domain/not-started.ts) even if no runner picks it up for a while.
 */
const DELIVERY_IN_TITLE = /\b(delivery-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export async function trackConsumerRun(
  options: WebhookIngestOptions,
  delivery: { guid: string; event: string; hookId: number | null },
  hook: RepositoryHookRow,
  payload: Json,
): Promise<WebhookOutcome> {
  const run = payload.workflow_run;
  if (!isObject(run)) return { outcome: 'malformed', detail: 'workflow_run is missing' };
  if (run.event !== 'repository_dispatch' && run.event !== 'workflow_dispatch') {
    return { outcome: 'ignored', detail: `runs triggered by ${String(run.event)} are not Zekt deliveries` };
  }
  const action = payload.action;
  if (action !== 'requested' && action !== 'in_progress' && action !== 'completed') {
    return { outcome: 'ignored', detail: `workflow_run.${String(action)} does not change a delivery` };
  }
  const byRun =
    typeof run.id === 'number'
      ? await findDeliveryOfRun(options.store.db, {
          repositoryId: hook.repository_id,
          runId: run.id,
          event: run.event,
          now: () => options.clock.now(),
        })
      : undefined;
  const title = typeof run.display_title === 'string' ? run.display_title : '';
  const deliveryId = byRun?.deliveryId ?? DELIVERY_IN_TITLE.exec(title)?.[1];
  if (!deliveryId) {
    return {
      outcome: 'ignored',
      detail:
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a JS template.
        'the run name carries no delivery id: set run-name: "zekt ${{ github.event.client_payload.zekt.deliveryId }}"',
    };
  }
  const repositoryId = hook.repository_id;
  const target = await getDelivery(options.store.db, deliveryId);
  if (!target || target.consumer_repository_id !== repositoryId) {
    return { outcome: 'ignored', detail: `${deliveryId} is not a delivery to this repository` };
  }
  if (action === 'requested') {
    // Queued, not running yet (no runner free): the workflow exists, so the delivery did start.
    // Idempotent and changing no delivery state, so neither recorded for deduplication nor charged.
    const seenAt = options.clock.now();
    await options.store.transaction((trx) => markRunSeen(trx, deliveryId, seenAt));
    return { outcome: 'ignored', detail: `${deliveryId} has a workflow run; it is no longer awaited` };
  }
  const now = options.clock.now();
  const fresh = await options.store.transaction(async (trx) => {
    if (!(await recordWebhookDelivery(trx, delivery, now))) return false;
    const repository = await getRepository(trx, repositoryId);
    if (repository) await countUsage(trx, repository.account_id, 'webhookDeliveriesReceived', now);
    return true;
  });
  if (!fresh) return { outcome: 'duplicate', detail: `delivery ${delivery.guid} was already processed` };
  const success = run.conclusion === 'success';
  const report =
    action === 'in_progress'
      ? ({ kind: 'confirm' } as const)
      : ({
          kind: 'complete',
          success,
          failureReason: success ? undefined : runFailureReason(String(run.conclusion ?? 'unknown')),
        } as const);
  const result = await applyConsumerReport(options, deliveryId, report, null);
  if (result.outcome === 'changed') {
    return { outcome: 'applied', detail: `${deliveryId} is ${result.delivery.status}` };
  }
  return { outcome: 'ignored', detail: `${deliveryId} is already final` };
}
