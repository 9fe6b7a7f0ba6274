import { randomInt } from 'node:crypto';
import { newGuid } from './ids.js';
import { hookPayload } from './payloads/hook-payload.js';
import { userPayload } from './payloads/user-payload.js';
import type { SimContext } from './sim-context.js';
import { SimInputError } from './sim-input-error.js';
import type { AppRecord, HookRecord, RepositoryRecord } from './sim-state.js';
import type { WebhookDeliveryRecord } from './types.js';
import { hookSubscribes, repositoryEventFields, repositoryHookTarget } from './webhook-targets.js';

/** GitHub's `ping` events carry a random line of the GitHub zen. */
const ZEN = [
  'Design for failure.',
  'Keep it logically awesome.',
  'Anything added dilutes everything else.',
  'Approachable is better than simple.',
  'Mind your words, they are important.',
  'Speak like a human.',
  'Half measures are as bad as nothing at all.',
  'Encourage flow.',
  'Non-blocking is better than blocking.',
  'Favor focus over features.',
  'Avoid administrative distraction.',
  'Practicality beats purity.',
  'Responsive is better than fast.',
  "It's not fully shipped until it's fast.",
];

/** The App that manages the repository's hooks: the App of its (first) installation. */
function repositoryApp(ctx: SimContext, repo: RepositoryRecord): AppRecord {
  const installation = ctx.state.installationOfRepository(repo);
  return installation === undefined ? ctx.app : ctx.state.appOf(installation);
}

/**
 * Sends the `ping` event GitHub sends to a new hook (and on `POST …/hooks/{id}/pings`).
 * https://docs.github.com/webhooks/webhook-events-and-payloads#ping
 */
export function sendPing(
  ctx: SimContext,
  hook: HookRecord,
  repo: RepositoryRecord,
): Promise<WebhookDeliveryRecord> {
  return ctx.webhooks.send(repositoryHookTarget(hook, repo), 'ping', {
    zen: ZEN[randomInt(0, ZEN.length)],
    hook_id: hook.id,
    hook: hookPayload(hook, repo, ctx.urls),
    ...repositoryEventFields(ctx, repo),
    sender: userPayload(repositoryApp(ctx, repo).bot, ctx.urls),
  });
}

/**
 * Sends an event to every hook of the repository that subscribed to it, under one GUID (the
 * event's, as GitHub does: `guid` when the event goes to other hooks too); resolves in hook order.
 */
export function sendToRepositoryHooks(
  ctx: SimContext,
  repo: RepositoryRecord,
  event: string,
  payload: unknown,
  guid: string = newGuid(),
): Promise<WebhookDeliveryRecord[]> {
  const hooks = ctx.state.hooksOfRepository(repo.id).filter((hook) => hookSubscribes(hook, event));
  return Promise.all(
    hooks.map((hook) => ctx.webhooks.send(repositoryHookTarget(hook, repo), event, payload, guid)),
  );
}

/** `sendRepositoryWebhook` of the public API: any event and payload, for `owner/repo`. */
export function sendRepositoryWebhook(
  ctx: SimContext,
  repository: string,
  event: string,
  payload: unknown,
): Promise<WebhookDeliveryRecord[]> {
  const repo = typeof repository === 'string' ? ctx.state.findRepositoryByFullName(repository) : undefined;
  if (repo === undefined)
    return Promise.reject(new SimInputError(`unknown repository ${String(repository)}`));
  if (typeof event !== 'string' || !/^[a-z_]+$/.test(event)) {
    return Promise.reject(
      new SimInputError(
        `event must be a GitHub event name such as "workflow_run"; got ${JSON.stringify(event)}`,
      ),
    );
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return Promise.reject(new SimInputError('payload must be a JSON object'));
  }
  return sendToRepositoryHooks(ctx, repo, event, payload);
}
