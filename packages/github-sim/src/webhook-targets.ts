import { organizationPayload } from './payloads/organization-payload.js';
import { repositoryPayload } from './payloads/repository-payload.js';
import type { SimContext } from './sim-context.js';
import type { AppRecord, HookRecord, RepositoryRecord } from './sim-state.js';
import type { WebhookDeliveryRecord } from './types.js';
import type { WebhookTarget } from './webhook-sender.js';

/** An App's own hook: its webhook URL and secret, target type `integration`. */
export function appHookTarget(app: AppRecord): WebhookTarget {
  return {
    hookType: 'app',
    hookId: app.hookId,
    url: app.webhookUrl,
    secret: app.webhookSecret,
    targetType: 'integration',
    targetId: app.id,
    repository: null,
  };
}

/** A repository hook, target type `repository`, signed with the hook's own secret (if any). */
export function repositoryHookTarget(hook: HookRecord, repo: RepositoryRecord): WebhookTarget {
  return {
    hookType: 'repository',
    hookId: hook.id,
    url: hook.config.url,
    secret: hook.config.secret,
    targetType: 'repository',
    targetId: repo.id,
    repository: `${repo.owner.login}/${repo.name}`,
  };
}

/** True when an active hook subscribed to the event (by name, or with `*`). */
export function hookSubscribes(hook: HookRecord, event: string): boolean {
  return hook.active && (hook.events.includes(event) || hook.events.includes('*'));
}

/** The `repository` (and `organization`, for organisation-owned repositories) of a repository event. */
export function repositoryEventFields(ctx: SimContext, repo: RepositoryRecord) {
  return {
    repository: repositoryPayload(repo, ctx.urls),
    ...(repo.owner.type === 'Organization'
      ? { organization: organizationPayload(repo.owner, ctx.urls) }
      : {}),
  };
}

/** Keeps a finished delivery and updates the hook's `last_response`, as GitHub shows it. */
export function recordDelivery(ctx: SimContext, delivery: WebhookDeliveryRecord): void {
  ctx.state.deliveries.push(delivery);
  if (delivery.hookType !== 'repository') return;
  const hook = ctx.state.hooks.get(delivery.hookId);
  if (hook === undefined) return;
  const ok = delivery.status !== null && delivery.status >= 200 && delivery.status < 300;
  hook.lastResponse = ok
    ? { code: delivery.status, status: 'active', message: 'OK' }
    : {
        code: delivery.status,
        status: 'failed',
        message: delivery.error ?? `Invalid HTTP Response: ${delivery.status}`,
      };
}
