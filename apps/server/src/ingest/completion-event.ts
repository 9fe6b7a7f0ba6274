import { parseWorkflowRun } from '../domain/run-summary.js';
import { getRepository } from '../store/accounts.js';
import { insertEvent } from '../store/events.js';
import type { RepositoryHookRow } from '../store/schema.js';
import { countUsage } from '../store/usage.js';
import { recordWebhookDelivery } from '../store/webhook-deliveries.js';
import { recordWorkflowSeen } from '../store/workflows.js';
import type { WebhookIngestOptions, WebhookOutcome } from './github-webhook.js';

/**
 * A provider's `workflow_run` webhook (SPEC 3.1). Only `completed` runs are stored; the event, the
 * delivery GUID and the usage counters commit together, so a retried delivery can never count or
 * route twice.
 */
export async function storeCompletionEvent(
  options: WebhookIngestOptions,
  delivery: { guid: string; event: string; hookId: number | null },
  hook: RepositoryHookRow,
  payload: Record<string, unknown>,
): Promise<WebhookOutcome> {
  if (payload.action !== 'completed') {
    return {
      outcome: 'ignored',
      detail: `workflow_run.${String(payload.action)} is not routed; only completed runs are`,
    };
  }
  const parsed = parseWorkflowRun(payload);
  if (!parsed.ok) return { outcome: 'malformed', detail: parsed.problem };
  const run = parsed.value;
  if (run.repositoryId !== Number(hook.repository_id)) {
    return {
      outcome: 'forbidden',
      detail: `this hook belongs to repository ${hook.repository_id}, but the payload is about repository ${run.repositoryId}`,
    };
  }
  const now = options.clock.now();
  const outcome = await options.store.transaction(async (trx): Promise<WebhookOutcome> => {
    const repository = await getRepository(trx, run.repositoryId);
    if (!repository?.provider_enabled || repository.removed_at !== null) {
      return {
        outcome: 'ignored',
        detail: `${run.summary.repository} is not enabled as a provider repository`,
      };
    }
    if (!(await recordWebhookDelivery(trx, delivery, now))) {
      return { outcome: 'duplicate', detail: `delivery ${delivery.guid} was already processed` };
    }
    const accountId = Number(repository.account_id);
    await countUsage(trx, accountId, 'webhookDeliveriesReceived', now);
    await recordWorkflowSeen(
      trx,
      { repositoryId: run.repositoryId, path: run.summary.workflowPath, name: run.summary.workflow },
      now,
    );
    const eventId = await insertEvent(
      trx,
      {
        repositoryId: run.repositoryId,
        runId: run.runId,
        runAttempt: run.runAttempt,
        accountId,
        summary: run.summary,
        routeAfter: now + options.messageGraceMs,
      },
      now,
    );
    if (eventId === null) {
      return {
        outcome: 'duplicate',
        detail: `run ${run.runId} attempt ${run.runAttempt} of ${run.summary.repository} was already received`,
      };
    }
    await countUsage(trx, accountId, 'eventsReceived', now);
    return { outcome: 'accepted', eventId };
  });
  if (outcome.outcome === 'accepted') options.onEventStored();
  return outcome;
}
