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
  const ok = async (method: string, path: string, token: string, body?: unknown) => {
    const response = await h.call(method, path, { token, body });
    if (response.status >= 300)
      throw new Error(`${method} ${path} → ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  await ok('PUT', '/api/v1/repositories/acme/api/provider', providerToken, { enabled: true });
  await ok('PUT', '/api/v1/repositories/acme/api/workflows/deploy.yml', providerToken, { whitelisted: true });
  const service = await ok('POST', '/api/v1/services', providerToken, {
    repository: 'acme/api',
    workflow: 'deploy.yml',
    slug: 'acme-deploys',
    eventType: options.eventType ?? 'acme-deployed',
    description: 'acme/api deployments',
    tags: ['deploy'],
    published: true,
  });
  const subscription = await ok('POST', '/api/v1/subscriptions', consumerToken, {
    serviceId: service.id,
    deliversTo: 'globex/app',
  });
  await ok('POST', `/api/v1/subscriptions/${subscription.id}/approve`, providerToken);
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
  const tracking = await h.call('PUT', '/api/v1/repositories/globex/app/completion-tracking', {
    token: world.consumerToken,
    body: { enabled: true },
  });
  if (tracking.status !== 200) throw new Error(`completion tracking: ${JSON.stringify(tracking.body)}`);
  const durable = await h.call('PATCH', `/api/v1/subscriptions/${world.subscriptionId}`, {
    token: world.consumerToken,
    body: { durable: true },
  });
  if (durable.status !== 200) throw new Error(`durable: ${JSON.stringify(durable.body)}`);
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
