import { expect } from 'vitest';
import { json, type ProcessGroup, type SimProcessInfo } from './processes.js';

/**
 * The demo world (provider acme/api, consumer globex/app, approved subscription) set up against
 * separate processes: installations through the simulator's control API, tokens with the `zekt`
 * CLI, everything else through the management API.
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
  const ok = async (method: string, path: string, token: string, body?: unknown) => {
    const response = await json(method, zektUrl + path, body, token);
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
    return response.body;
  };
  await ok('PUT', '/api/v1/repositories/acme/api/provider', alice, { enabled: true });
  await ok('PUT', `/api/v1/repositories/acme/api/workflows/${input.workflow}`, alice, { whitelisted: true });
  const service = await ok('POST', '/api/v1/services', alice, {
    repository: 'acme/api',
    workflow: input.workflow,
    slug: 'acme-service',
    published: true,
  });
  const subscription = await ok('POST', '/api/v1/subscriptions', bob, {
    serviceId: service.id,
    deliversTo: 'globex/app',
  });
  await ok('POST', `/api/v1/subscriptions/${subscription.id}/approve`, alice);
  if (input.durable) {
    await ok('PUT', '/api/v1/repositories/globex/app/completion-tracking', bob, { enabled: true });
    await ok('PATCH', `/api/v1/subscriptions/${subscription.id}`, bob, { durable: true });
  }
  return {
    alice,
    bob,
    serviceId: service.id,
    subscriptionId: subscription.id,
    providerRepository: provider.body.repositories[0],
  };
}
