import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDurable, setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

interface Entry {
  id: string;
  account: string | null;
  actor: { login: string; userId: string | null; tokenId: string | null };
  action: string;
  target: { type: string; id: string };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** The audit trail: each change of configuration leaves its entry, seen only by its accounts. */
describe('audit trail', () => {
  let h: Harness;
  let world: World;
  let malloryToken: string;

  async function trail(token: string, query = ''): Promise<Entry[]> {
    const entries: Entry[] = [];
    let cursor: string | null = null;
    do {
      const response = await h.call(
        'GET',
        `/api/v1/audit?limit=3${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token },
      );
      expect(response.status).toBe(200);
      entries.push(...response.body.entries);
      cursor = response.body.nextCursor;
    } while (cursor);
    return entries;
  }

  const ok = async (method: string, path: string, token: string, body?: unknown) => {
    const response = await h.call(method, path, { token, body });
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    return response.body;
  };

  beforeAll(async () => {
    h = await startHarness({ transport: 'inject' });
    world = await setUpWorld(h);
    await h.sim.createInstallation({
      account: { login: 'initech', type: 'Organization' },
      repositories: ['tps'],
      sender: { login: 'mallory' },
    });
    malloryToken = await h.tokenFor('mallory');
  });
  afterAll(async () => {
    await h.close();
  });

  it('records the set-up of a provider and a consumer, with who did it and what changed', async () => {
    const acme = await trail(world.providerToken);
    const actions = acme.map((e) => `${e.action} ${e.target.id}`).reverse();
    expect(actions).toEqual([
      expect.stringMatching(/^token\.create tok_/),
      'provider.switch acme/api',
      'workflow.whitelist acme/api/.github/workflows/deploy.yml',
      `service.create ${world.serviceId}`,
      `subscription.request ${world.subscriptionId}`,
      `subscription.approve ${world.subscriptionId}`,
    ]);
    const [approve, , , , providerSwitch, token] = acme;
    expect(token).toMatchObject({
      account: 'acme',
      actor: { login: 'zekt token create', tokenId: null },
      after: { login: 'alice', name: 'cli' },
    });
    // Changes made with that token name it.
    expect(providerSwitch).toMatchObject({
      actor: { login: 'alice', tokenId: token!.target.id },
      before: { enabled: false },
      after: { enabled: true },
    });
    expect(approve).toMatchObject({
      actor: { login: 'alice' },
      before: { status: 'requested' },
      after: { status: 'approved' },
    });
    // The consumer's side of the subscription sees its request and the provider's decision.
    const globex = await trail(world.consumerToken);
    expect(globex.map((e) => e.action).reverse()).toEqual([
      'token.create',
      'subscription.request',
      'subscription.approve',
    ]);
    expect(globex[1]).toMatchObject({
      account: 'globex',
      actor: { login: 'bob' },
      after: { deliversTo: 'globex/app' },
    });
  });

  it('records service edits, publishing, COMPLETION, Durable Delivery and replay', async () => {
    await ok('PATCH', `/api/v1/services/${world.serviceId}`, world.providerToken, { description: 'v2' });
    await ok('PATCH', `/api/v1/services/${world.serviceId}`, world.providerToken, { published: false });
    await ok('PATCH', `/api/v1/services/${world.serviceId}`, world.providerToken, { published: true });
    // Nothing changed: nothing to record.
    await ok('PATCH', `/api/v1/services/${world.serviceId}`, world.providerToken, { description: 'v2' });
    const edits = await trail(world.providerToken, `&target=${world.serviceId}`);
    expect(edits.map((e) => [e.action, e.before, e.after])).toEqual([
      ['service.publish', { published: false }, { published: true }],
      ['service.unpublish', { published: true }, { published: false }],
      ['service.update', { description: 'acme/api deployments' }, { description: 'v2' }],
      ['service.create', null, expect.objectContaining({ slug: 'acme-deploys', published: true })],
    ]);

    await makeDurable(h, world);
    const durable = await trail(world.consumerToken, '&action=subscription.durable');
    expect(durable).toMatchObject([{ before: { durable: false }, after: { durable: true } }]);
    expect(await trail(world.consumerToken, '&action=completion_tracking.switch')).toMatchObject([
      { target: { type: 'repository', id: 'globex/app' }, after: { enabled: true } },
    ]);
    // The provider sees the consumer made the connection durable, not the consumer's repository switch.
    expect(await trail(world.providerToken, '&action=subscription.durable')).toHaveLength(1);
    expect(await trail(world.providerToken, '&action=completion_tracking.switch')).toEqual([]);

    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
    const deliveryId = (dispatch.clientPayload as { zekt: { deliveryId: string } }).zekt.deliveryId;
    const headers = { 'idempotency-key': 'once' };
    const replay = await h.call('POST', `/api/replay/${deliveryId}`, { token: world.consumerToken, headers });
    const again = await h.call('POST', `/api/replay/${deliveryId}`, { token: world.consumerToken, headers });
    expect([replay.status, again.body.deliveryId]).toEqual([202, replay.body.deliveryId]);
    // One replay made, one entry (the repeated request made nothing new), seen by both sides.
    for (const token of [world.consumerToken, world.providerToken]) {
      expect(await trail(token, `&target=${deliveryId}`)).toMatchObject([
        { action: 'delivery.replay', actor: { login: 'bob' }, after: { replayId: replay.body.deliveryId } },
      ]);
    }
  });

  it('records each subscription decision, and nothing for a refused one', async () => {
    const id = world.subscriptionId;
    await ok('POST', `/api/v1/subscriptions/${id}/revoke`, world.consumerToken);
    const refused = await h.call('POST', `/api/v1/subscriptions/${id}/approve`, {
      token: world.providerToken,
    });
    expect(refused.status).toBe(409);
    const second = await ok('POST', '/api/v1/subscriptions', world.consumerToken, {
      serviceId: world.serviceId,
      deliversTo: 'globex/app',
    });
    await ok('POST', `/api/v1/subscriptions/${second.id}/deny`, world.providerToken);
    const third = await ok('POST', '/api/v1/subscriptions', world.consumerToken, {
      serviceId: world.serviceId,
      deliversTo: 'globex/app',
    });
    await ok('POST', `/api/v1/subscriptions/${third.id}/approve`, world.providerToken);
    await ok('POST', `/api/v1/subscriptions/${third.id}/revoke`, world.providerToken);

    const seen = async (token: string) =>
      (await trail(token))
        .filter((e) => e.target.type === 'subscription' && e.action !== 'subscription.durable')
        .map((e) => `${e.action} ${e.target.id} ${e.actor.login}`)
        .reverse();
    const expected = [
      `subscription.request ${id} bob`,
      `subscription.approve ${id} alice`,
      `subscription.withdraw ${id} bob`,
      `subscription.request ${second.id} bob`,
      `subscription.deny ${second.id} alice`,
      `subscription.request ${third.id} bob`,
      `subscription.approve ${third.id} alice`,
      `subscription.revoke ${third.id} alice`,
    ];
    expect(await seen(world.providerToken)).toEqual(expected);
    expect(await seen(world.consumerToken)).toEqual(expected);
  });

  it("never shows another account's entries", async () => {
    const mallory = await trail(malloryToken);
    expect(mallory.map((e) => [e.account, e.action])).toEqual([['initech', 'token.create']]);
    const foreign = await h.call('GET', '/api/v1/audit?account=acme', { token: malloryToken });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'account_not_found']);
    expect(foreign.contentType).toContain('application/problem+json');
    const byTarget = await h.call('GET', `/api/v1/audit?target=${world.serviceId}`, { token: malloryToken });
    expect(byTarget.body.entries).toEqual([]);
    const forged = await h.call('GET', '/api/v1/audit?action=drop.tables', { token: malloryToken });
    expect([forged.status, forged.body.code]).toEqual([400, 'invalid_request']);
    const badCursor = await h.call('GET', '/api/v1/audit?cursor=nope', { token: malloryToken });
    expect([badCursor.status, badCursor.body.code]).toEqual([400, 'invalid_cursor']);
  });
});
