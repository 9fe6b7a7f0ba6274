import type { SimContext } from './sim-context.js';
import { SimInputError } from './sim-input-error.js';
import type { WebhookDeliveryRecord } from './types.js';
import { appHookTarget, repositoryHookTarget } from './webhook-targets.js';

/**
 * Sends a delivery again under its GUID, to where its hook points now: GitHub's "Redeliver"
 * (`POST …/deliveries/{delivery_id}/attempts`, `redeliver(guid)`).
 */
export function redeliverWebhook(ctx: SimContext, guid: string): Promise<WebhookDeliveryRecord> {
  const sent = ctx.webhooks.sentDelivery(guid);
  if (sent === undefined) throw new SimInputError(`no webhook delivery with GUID ${guid}`);
  if (sent.hookType === 'app') {
    const app = ctx.state.findAppByHookId(sent.hookId);
    if (app === undefined) throw new SimInputError(`the App of delivery ${guid} no longer exists`);
    return ctx.webhooks.redeliver(guid, appHookTarget(app));
  }
  const hook = ctx.state.hooks.get(sent.hookId);
  const repo = hook === undefined ? undefined : ctx.state.repositories.get(hook.repositoryId);
  if (hook === undefined || repo === undefined) {
    throw new SimInputError(`hook ${sent.hookId} of delivery ${guid} no longer exists`);
  }
  return ctx.webhooks.redeliver(guid, repositoryHookTarget(hook, repo));
}
