import type { SimContext } from './sim-context.js';
import { SimInputError } from './sim-input-error.js';
import type { WebhookDeliveryRecord } from './types.js';
import { appHookTarget, repositoryHookTarget } from './webhook-targets.js';

/**
 * Sends a delivery again under its GUID, to where its hook points now: GitHub's "Redeliver"
 * (`POST …/deliveries/{delivery_id}/attempts`, `redeliver(guid, { hookId })`). A GUID is the
 * event's, shared by every hook that received it, so a redelivery names its hook; `hookId` may be
 * left out when the GUID went to one hook only.
 */
export async function redeliverWebhook(
  ctx: SimContext,
  guid: string,
  hookId?: number,
): Promise<WebhookDeliveryRecord> {
  const candidates = ctx.webhooks
    .sentDeliveries(guid)
    .filter((sent) => hookId === undefined || sent.hookId === hookId);
  const [sent] = candidates;
  if (sent === undefined) {
    throw new SimInputError(
      hookId === undefined
        ? `no webhook delivery with GUID ${guid}`
        : `no webhook delivery with GUID ${guid} to hook ${hookId}`,
    );
  }
  if (candidates.length > 1) {
    throw new SimInputError(
      `GUID ${guid} went to hooks ${candidates.map((c) => c.hookId).join(', ')}: say which one to redeliver to (hookId)`,
    );
  }
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
