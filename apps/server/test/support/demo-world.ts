import { ok } from '../../src/cli/zekt-client.js';
import type { Harness } from './harness.js';

/**
 * A provider (acme/api, workflow deploy.yml, published service) and a consumer (globex/app,
 * approved subscription), set up through the management API like a user would.
 */
export interface World {
  providerToken: string;
  consumerToken: string;
  serviceId: string;
  subscriptionId: string;
}

export async function setUpWorld(h: Harness, options: { eventType?: string } = {}): Promise<World> {
  await h.sim.createInstallation({
    account: { login: 'acme', type: 'Organization' },
    repositories: ['api', 'web'],
    sender: { login: 'alice' },
  });
  await h.sim.createInstallation({
    account: { login: 'globex', type: 'Organization' },
    repositories: ['app'],
    sender: { login: 'bob' },
  });
  const providerToken = await h.tokenFor('alice');
  const consumerToken = await h.tokenFor('bob');
  const asProvider = h.client(providerToken);
  const asConsumer = h.client(consumerToken);
  const provider = { owner: 'acme', repo: 'api' };
  await asProvider.PUT('/api/v1/repositories/{owner}/{repo}/provider', {
    params: { path: provider },
    body: { enabled: true },
  });
  await asProvider.PUT('/api/v1/repositories/{owner}/{repo}/workflows/{file}', {
    params: { path: { ...provider, file: 'deploy.yml' } },
    body: { whitelisted: true },
  });
  const service = await ok(
    asProvider.POST('/api/v1/services', {
      body: {
        repository: 'acme/api',
        workflow: 'deploy.yml',
        slug: 'acme-deploys',
        eventType: options.eventType ?? 'acme-deployed',
        description: 'acme/api deployments',
        tags: ['deploy'],
        published: true,
      },
    }),
  );
  const subscription = await ok(
    asConsumer.POST('/api/v1/subscriptions', { body: { serviceId: service.id, deliversTo: 'globex/app' } }),
  );
  await asProvider.POST('/api/v1/subscriptions/{id}/approve', { params: { path: { id: subscription.id } } });
  return { providerToken, consumerToken, serviceId: service.id, subscriptionId: subscription.id };
}

/** GitHub's id of the hook Zekt placed in `repository` (`owner/name`) for `role`. */
export async function placedHookId(
  h: Harness,
  repository: string,
  role: 'provider' | 'completion',
): Promise<number> {
  const row = await h.zekt.store.db
    .selectFrom('repository_hooks')
    .innerJoin('repositories', 'repositories.repository_id', 'repository_hooks.repository_id')
    .select('repository_hooks.hook_id')
    .where('repositories.full_name', '=', repository)
    .where('repository_hooks.role', '=', role)
    .executeTakeFirstOrThrow();
  return Number(row.hook_id);
}

/** Turns the world's subscription durable: completion tracking on globex/app, then the switch. */
export async function makeDurable(h: Harness, world: World): Promise<void> {
  const asConsumer = h.client(world.consumerToken);
  await asConsumer.PUT('/api/v1/repositories/{owner}/{repo}/completion-tracking', {
    params: { path: { owner: 'globex', repo: 'app' } },
    body: { enabled: true },
  });
  await asConsumer.PATCH('/api/v1/subscriptions/{id}', {
    params: { path: { id: world.subscriptionId } },
    body: { durable: true },
  });
}

/**
 * Runs the provider's workflow once while the consumer's repository answers every dispatch with
 * `status`: with a 4xx the world's only delivery fails, which turns its connection Critical.
 */
export async function runWhileConsumerRefuses(h: Harness, status: number): Promise<void> {
  h.sim.injectFaults({
    method: 'POST',
    path: '/repos/globex/app/dispatches',
    faults: [{ kind: 'status', status }],
  });
  await h.sim.runWorkflow({
    repository: 'acme/api',
    workflow: 'deploy.yml',
    message: { zektUrl: h.url, eventType: 'acme-deployed', payload: {} },
  });
}
