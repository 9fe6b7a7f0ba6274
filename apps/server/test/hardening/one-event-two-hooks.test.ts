import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeDurable, placedHookId, setUpWorld, type World } from '../support/demo-world.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';

/**
 * One event, one GUID, two hooks. GitHub gives an event the same `X-GitHub-Delivery` GUID on every
 * hook that receives it, and the simulator does too. globex/app here is a completion-tracked
 * consumer (of acme/api's service) and a provider (acme/web subscribes to its `on-deploy.yml`), so
 * each `workflow_run` of its consumer workflow reaches both of Zekt's hooks under one GUID: the
 * completion hook completes the delivery it received, the provider hook routes the run to acme/web.
 * Keyed on the GUID alone, whichever came second was taken for a duplicate.
 */
describe('one event on two hooks of one repository', () => {
  let h: Harness;
  let world: World;
  beforeEach(async () => {
    h = await startHarness({ transport: 'inject', env: { ZEKT_RECONCILE_INTERVAL_MS: '0' } });
    world = await setUpWorld(h);
    await makeDurable(h, world);
    const ok = async (method: string, path: string, token: string, body?: unknown) => {
      const response = await h.call(method, path, { token, body });
      if (response.status >= 300)
        throw new Error(`${method} ${path} → ${response.status} ${JSON.stringify(response.body)}`);
      return response.body;
    };
    await ok('PUT', '/api/v1/repositories/globex/app/provider', world.consumerToken, { enabled: true });
    await ok('PUT', '/api/v1/repositories/globex/app/workflows/on-deploy.yml', world.consumerToken, {
      whitelisted: true,
    });
    const service = await ok('POST', '/api/v1/services', world.consumerToken, {
      repository: 'globex/app',
      workflow: 'on-deploy.yml',
      slug: 'globex-app-deploys',
      eventType: 'globex-deployed',
      description: 'globex/app deployments',
      tags: [],
      published: true,
    });
    const subscription = await ok('POST', '/api/v1/subscriptions', world.providerToken, {
      serviceId: service.id,
      deliversTo: 'acme/web',
    });
    await ok('POST', `/api/v1/subscriptions/${subscription.id}/approve`, world.consumerToken);
    h.sim.defineConsumerWorkflow({
      repository: 'globex/app',
      workflow: 'on-deploy.yml',
      types: ['acme-deployed'],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a JS template.
      runName: 'zekt ${{ github.event.client_payload.zekt.deliveryId }}',
    });
  });
  afterEach(async () => {
    await h.close();
  });

  const hookIdOf = (role: 'provider' | 'completion') => placedHookId(h, 'globex/app', role);

  /** Runs acme/api's workflow and waits until globex/app's consumer run it started completed. */
  async function deliverAndRunConsumer() {
    await h.sim.runWorkflow({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { version: '1.0.0' } },
    });
    return eventually(
      () => h.sim.consumerRuns({ repository: 'globex/app' }).find((run) => run.status === 'completed'),
      20_000,
    );
  }
  const deliveryStatus = async (deliveryId: string) =>
    (await h.call('GET', `/api/v1/deliveries/${deliveryId}`, { token: world.providerToken })).body
      .deliveryStatus;
  const routedToWeb = (runId: number) =>
    h.sim
      .dispatches({ repository: 'acme/web' })
      .find(
        (d) => (d.clientPayload as { zekt: { correlationId: string } }).zekt.correlationId === String(runId),
      );

  it('completes the delivery through the completion hook and routes the run through the provider hook', async () => {
    const providerHook = await hookIdOf('provider');
    const completionHook = await hookIdOf('completion');
    const run = await deliverAndRunConsumer();
    expect(run.deliveryId).toMatch(/^delivery-/);

    // GitHub's shape: the completed run went to both hooks under one GUID, and each was acted on.
    const completed = run.webhooks.filter(
      (d) => (d.payload as { action: string }).action === 'completed' && d.hookType === 'repository',
    );
    expect(completed.map((d) => d.hookId).sort()).toEqual([providerHook, completionHook].sort());
    expect(new Set(completed.map((d) => d.guid)).size).toBe(1);
    for (const delivery of completed) {
      expect(delivery.status).toBeGreaterThanOrEqual(200);
      expect(delivery.status).toBeLessThan(300);
      expect(JSON.parse(delivery.responseBody ?? '{}').outcome).not.toBe('duplicate');
    }

    // The consumer side: the delivery globex/app received is Completed (not stuck Confirmed).
    expect(
      await eventually(async () => {
        const status = await deliveryStatus(run.deliveryId ?? '');
        return status === 'Completed' ? status : undefined;
      }),
    ).toBe('Completed');
    // The provider side: globex/app's run reached its own subscriber.
    const dispatch = await eventually(() => routedToWeb(run.id));
    expect(dispatch.eventType).toBe('globex-deployed');

    // The same GUID again, to either hook (GitHub's Redeliver): a duplicate there, nothing twice.
    const guid = completed[0]?.guid ?? '';
    for (const hookId of [providerHook, completionHook]) {
      const again = await h.sim.redeliver(guid, { hookId });
      expect(again.status).toBe(200);
      expect(JSON.parse(again.responseBody ?? '{}')).toMatchObject({ outcome: 'duplicate' });
    }
    const events = await h.zekt.store.db
      .selectFrom('events')
      .select('event_id')
      .where('run_id', '=', run.id)
      .execute();
    expect(events).toHaveLength(1);
    expect(h.sim.dispatches({ repository: 'acme/web' })).toHaveLength(1);
  });

  it('the reconciler asks again for the hook that missed the event, though the other hook received its GUID', async () => {
    const completionHook = await hookIdOf('completion');
    h.sim.dropWebhooks({ event: 'workflow_run', hookId: completionHook, count: 10 });
    const run = await deliverAndRunConsumer();
    // The provider hook received the run; the completion hook received none of its webhooks.
    await eventually(() => routedToWeb(run.id));
    expect(await deliveryStatus(run.deliveryId ?? '')).toBe('Dispatched');
    h.sim.clearWebhookDrops();

    const report = await h.zekt.reconciler.reconcile({ waitForRecoveryMs: 10_000 });
    const completionGuid = run.webhooks.find(
      (d) => d.hookId === completionHook && (d.payload as { action: string }).action === 'completed',
    )?.guid;
    expect(report.requested.map((r) => [r.guid, r.hook])).toContainEqual([
      completionGuid,
      `repository:${completionHook}`,
    ]);
    expect(report.requested.every((r) => r.hook === `repository:${completionHook}`)).toBe(true);
    expect(report.recovered.map((r) => r.guid)).toContain(completionGuid);
    expect(
      await eventually(async () => {
        const status = await deliveryStatus(run.deliveryId ?? '');
        return status === 'Completed' ? status : undefined;
      }),
    ).toBe('Completed');
    expect(h.sim.dispatches({ repository: 'acme/web' })).toHaveLength(1);
  });
});
