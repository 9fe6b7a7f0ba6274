import type { GitHubSimulator } from 'zekt-github-sim';
import type { Store } from '../store/store.js';
import { createTokenForLogin } from './token.js';
import { createZektClient, ok } from './zekt-client.js';

/**
 * The demo `zekt dev` sets up, through the same paths a real user takes: the simulator installs
 * the App on two organisations (GitHub sends `installation.created`), and the management API
 * enables the provider repository, whitelists its workflow, publishes a service, and subscribes
 * the consumer.
 */
export const DEMO = {
  provider: {
    account: 'acme',
    user: 'alice',
    repository: 'acme/api',
    workflow: 'deploy.yml',
    workflowName: 'Deploy',
  },
  consumer: { account: 'globex', user: 'bob', repository: 'globex/deployer' },
  service: { slug: 'acme-deploys', eventType: 'acme-deployed' },
} as const;

export interface DemoState {
  zektUrl: string;
  simUrl: string;
  tokens: { provider: string; consumer: string };
  serviceId: string;
  serviceSlug: string;
  subscriptionId: string;
  provider: typeof DEMO.provider;
  consumer: typeof DEMO.consumer;
  eventType: string;
}

export async function seedDemo(input: {
  zektUrl: string;
  sim: GitHubSimulator;
  store: Store;
}): Promise<DemoState> {
  const { zektUrl, sim, store } = input;
  await sim.createInstallation({
    account: { login: DEMO.provider.account, type: 'Organization' },
    repositories: [DEMO.provider.repository.split('/')[1]!],
    sender: { login: DEMO.provider.user },
  });
  await sim.createInstallation({
    account: { login: DEMO.consumer.account, type: 'Organization' },
    repositories: [DEMO.consumer.repository.split('/')[1]!],
    sender: { login: DEMO.consumer.user },
  });
  const provider = (await createTokenForLogin(store, { login: DEMO.provider.user, name: 'zekt dev' })).token;
  const consumer = (await createTokenForLogin(store, { login: DEMO.consumer.user, name: 'zekt dev' })).token;
  const asProvider = createZektClient({ baseUrl: zektUrl, token: provider });
  const asConsumer = createZektClient({ baseUrl: zektUrl, token: consumer });
  const [owner, repo] = DEMO.provider.repository.split('/') as [string, string];
  const consumerRepository = DEMO.consumer.repository.split('/') as [string, string];

  await asProvider.PUT('/api/v1/repositories/{owner}/{repo}/provider', {
    params: { path: { owner, repo } },
    body: { enabled: true },
  });
  await asProvider.PUT('/api/v1/repositories/{owner}/{repo}/workflows/{file}', {
    params: { path: { owner, repo, file: DEMO.provider.workflow } },
    body: { whitelisted: true },
  });
  const service = await ok(
    asProvider.POST('/api/v1/services', {
      body: {
        repository: DEMO.provider.repository,
        workflow: DEMO.provider.workflow,
        slug: DEMO.service.slug,
        eventType: DEMO.service.eventType,
        description: 'Fires when acme/api finishes a deployment',
        tags: ['deploy', 'demo'],
        visibility: 'public',
        published: true,
      },
    }),
  );
  const subscription = await ok(
    asConsumer.POST('/api/v1/subscriptions', {
      body: { serviceId: service.id, deliversTo: DEMO.consumer.repository },
    }),
  );
  await asProvider.POST('/api/v1/subscriptions/{id}/approve', { params: { path: { id: subscription.id } } });
  // Durable delivery: completion tracking on the consumer repository, then the subscription's switch,
  // and a consumer workflow that confirms and completes with its OIDC token, like the Zekt action does.
  await asConsumer.PUT('/api/v1/repositories/{owner}/{repo}/completion-tracking', {
    params: { path: { owner: consumerRepository[0], repo: consumerRepository[1] } },
    body: { enabled: true },
  });
  await asConsumer.PATCH('/api/v1/subscriptions/{id}', {
    params: { path: { id: subscription.id } },
    body: { durable: true },
  });
  // It also runs by workflow_dispatch, so the subscription can be switched to that mode in the
  // console (Zekt Subscriptions › Delivered as) and the demo keeps working.
  sim.defineConsumerWorkflow({
    repository: DEMO.consumer.repository,
    workflow: 'on-acme-deploy.yml',
    name: 'React to acme deployments',
    on: {
      repository_dispatch: { types: [DEMO.service.eventType] },
      workflow_dispatch: { inputs: { zekt: { required: true, type: 'string' } } },
    },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
    runName: 'zekt ${{ github.event.client_payload.zekt.deliveryId }}',
    zekt: { url: zektUrl, confirm: true, complete: true, auth: 'oidc' },
  });

  return {
    zektUrl,
    simUrl: sim.url,
    tokens: { provider, consumer },
    serviceId: service.id,
    serviceSlug: DEMO.service.slug,
    subscriptionId: subscription.id,
    provider: DEMO.provider,
    consumer: DEMO.consumer,
    eventType: DEMO.service.eventType,
  };
}
