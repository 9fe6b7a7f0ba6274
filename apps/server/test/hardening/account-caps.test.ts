import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpWorld, type World } from '../support/demo-world.js';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * One tenant cannot grow the store without bound. Services, workflows and
 * pending subscription requests are capped per account, with `409 limit_reached` naming the limit.
 */
let h: Harness;
let world: World;
beforeAll(async () => {
  h = await startHarness({
    transport: 'inject',
    env: {
      ZEKT_MAX_SERVICES_PER_ACCOUNT: '3',
      ZEKT_MAX_WORKFLOWS_PER_ACCOUNT: '4',
      ZEKT_MAX_PENDING_REQUESTS_PER_ACCOUNT: '2',
    },
  });
  world = await setUpWorld(h);
});
afterAll(async () => {
  await h.close();
});

function expectLimit(
  response: { status: number; contentType: string; body: { code: string; limit: number } },
  limit: number,
) {
  expect(response.status).toBe(409);
  expect(response.contentType).toContain('application/problem+json');
  expect(response.body).toMatchObject({ code: 'limit_reached', limit });
}

describe('per-account caps', () => {
  it('on workflows and services', async () => {
    const whitelist = (file: string) =>
      h.call('PUT', `/api/v1/repositories/acme/api/workflows/${file}`, {
        token: world.providerToken,
        body: { whitelisted: true },
      });
    // deploy.yml exists; three more reach the cap of 4.
    for (const file of ['a.yml', 'b.yml', 'c.yml']) expect((await whitelist(file)).status).toBe(200);
    expectLimit(await whitelist('d.yml'), 4);
    expect((await whitelist('a.yml')).status).toBe(200);

    const create = (slug: string, workflow: string) =>
      h.call('POST', '/api/v1/services', {
        token: world.providerToken,
        body: { repository: 'acme/api', workflow, slug },
      });
    expect((await create('s-a', 'a.yml')).status).toBe(201);
    expect((await create('s-b', 'b.yml')).status).toBe(201);
    expectLimit(await create('s-c', 'c.yml'), 3);
    const services = await h.zekt.store.db.selectFrom('services').select('service_id').execute();
    expect(services).toHaveLength(3);
  });

  it('on pending subscription requests', async () => {
    await h.sim.createInstallation({
      account: { login: 'initech', type: 'Organization' },
      repositories: ['one', 'two', 'three'],
      sender: { login: 'mallory' },
    });
    const mallory = await h.tokenFor('mallory');
    const request = (repo: string) =>
      h.call('POST', '/api/v1/subscriptions', {
        token: mallory,
        body: { serviceId: world.serviceId, deliversTo: `initech/${repo}` },
      });
    expect((await request('one')).status).toBe(201);
    expect((await request('two')).status).toBe(201);
    expectLimit(await request('three'), 2);
  });
});
