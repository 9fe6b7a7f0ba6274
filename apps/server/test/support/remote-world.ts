import { expect } from 'vitest';
import { createZektClient, ok } from '../../src/cli/zekt-client.js';
import { json, type ProcessGroup, type SimProcessInfo } from './processes.js';

/**
 * The demo world (provider acme/api, consumer globex/app, approved subscription) set up against
 * separate processes: installations through the simulator's control API, tokens with the `zekt`
 * CLI, everything else through the management API's typed client.
 */
export interface RemoteWorld {
  alice: string;
  bob: string;
  serviceId: string;
  subscriptionId: string;
  /** The simulator's repository object of acme/api (for hand-made webhook payloads). */
  providerRepository: Record<string, unknown>;
}

export async function setUpRemoteWorld(input: {
  processes: ProcessGroup;
  sim: SimProcessInfo;
  zektUrl: string;
  zektEnv: Record<string, string>;
  workflow: string;
  durable?: boolean;
  /** The slug of the App to install (one registered through setup); default the simulator's own. */
  app?: string;
}): Promise<RemoteWorld> {
  const { sim, zektUrl } = input;
  const app = input.app === undefined ? {} : { app: input.app };
  const provider = await json('POST', `${sim.url}/_sim/installations`, {
    account: { login: 'acme', type: 'Organization' },
    repositories: ['api'],
    sender: { login: 'alice' },
    ...app,
  });
  expect(provider.status).toBe(201);
  expect(provider.body.delivery.status).toBe(200);
  const consumer = await json('POST', `${sim.url}/_sim/installations`, {
    account: { login: 'globex', type: 'Organization' },
    repositories: ['app'],
    sender: { login: 'bob' },
    ...app,
  });
  expect(consumer.status).toBe(201);
  const tokenOf = async (login: string) =>
    (await input.processes.run(['token', 'create', '--login', login], input.zektEnv))
      .trim()
      .split('\n')
      .pop()!;
  const alice = await tokenOf('alice');
  const bob = await tokenOf('bob');
  const asAlice = createZektClient({ baseUrl: zektUrl, token: alice });
  const asBob = createZektClient({ baseUrl: zektUrl, token: bob });
  await asAlice.PUT('/api/v1/repositories/{owner}/{repo}/provider', {
    params: { path: { owner: 'acme', repo: 'api' } },
    body: { enabled: true },
  });
  await asAlice.PUT('/api/v1/repositories/{owner}/{repo}/workflows/{file}', {
    params: { path: { owner: 'acme', repo: 'api', file: input.workflow } },
    body: { whitelisted: true },
  });
  const service = await ok(
    asAlice.POST('/api/v1/services', {
      body: { repository: 'acme/api', workflow: input.workflow, slug: 'acme-service', published: true },
    }),
  );
  const subscription = await ok(
    asBob.POST('/api/v1/subscriptions', { body: { serviceId: service.id, deliversTo: 'globex/app' } }),
  );
  await asAlice.POST('/api/v1/subscriptions/{id}/approve', { params: { path: { id: subscription.id } } });
  if (input.durable) {
    await asBob.PUT('/api/v1/repositories/{owner}/{repo}/completion-tracking', {
      params: { path: { owner: 'globex', repo: 'app' } },
      body: { enabled: true },
    });
    await asBob.PATCH('/api/v1/subscriptions/{id}', {
      params: { path: { id: subscription.id } },
      body: { durable: true },
    });
  }
  return {
    alice,
    bob,
    serviceId: service.id,
    subscriptionId: subscription.id,
    providerRepository: provider.body.repositories[0],
  };
}
