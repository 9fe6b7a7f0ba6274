import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/harness.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { type JsonBody, json, ProcessGroup, type SimProcessInfo } from './support/processes.js';
import { parsePrometheusText, sampleValue } from './support/prometheus-text.js';
import { type RemoteWorld, setUpRemoteWorld } from './support/remote-world.js';

/**
 * No acknowledged event is ever lost: Zekt is killed with SIGKILL after it answered
 * the completion webhook and before it dispatched; after a restart on the same store, the delivery
 * goes out. The first process runs the API role only, so "before the dispatch" is certain.
 */
const processes = new ProcessGroup();
let sim: SimProcessInfo;
let zektUrl: string;
let stack: ProcessStack;
let zektEnv: Record<string, string>;
let world: RemoteWorld;

beforeAll(async () => {
  stack = await prepareProcessStack(processes, { name: 'crash' });
  ({ sim, zektUrl, zektEnv } = stack);
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe('crash recovery', () => {
  it('dispatches after a SIGKILL between the webhook acknowledgement and the dispatch', async () => {
    const apiOnly = await processes.startZekt(zektUrl, zektEnv, ['--role', 'api']);
    world = await setUpRemoteWorld({
      processes,
      sim,
      zektUrl,
      zektEnv,
      workflow: 'deploy.yml',
      durable: true,
    });
    const message = { version: '3.1.4', survived: 'SIGKILL' };
    const run = await json('POST', `${sim.url}/_sim/repos/acme/api/runs`, {
      workflow: 'deploy.yml',
      message: { zektUrl, eventType: 'deployed', payload: message },
    });
    expect(run.status).toBe(201);
    expect(run.body.message.status).toBe(201);
    expect(run.body.webhooks.map((w: { status: number }) => w.status)).toEqual([202]);
    expect((await json('GET', `${sim.url}/_sim/dispatches`)).body).toEqual([]);

    await processes.kill(apiOnly);
    expect(apiOnly.signalCode).toBe('SIGKILL');

    const restarted = await processes.startZekt(zektUrl, zektEnv);
    const dispatch = await eventually(async () => {
      const list = (await json('GET', `${sim.url}/_sim/dispatches?repository=globex/app`)).body as JsonBody[];
      return list[0];
    });
    const zekt = dispatch.clientPayload.zekt;
    expect(zekt).toMatchObject({
      correlationId: String(run.body.run.id),
      durable: true,
      isReplay: false,
      retry: 0,
    });
    expect(zekt.payload).toEqual(message);
    expect((await json('GET', `${sim.url}/_sim/dispatches`)).body).toHaveLength(1);
    const record = await eventually(async () => {
      const response = await json(
        'GET',
        `${zektUrl}/api/v1/deliveries/${zekt.deliveryId}`,
        undefined,
        world.alice,
      );
      return response.body.dispatch?.state === 'accepted' ? response.body : undefined;
    });
    expect(record).toMatchObject({
      deliveryStatus: 'Dispatched',
      attempts: [expect.objectContaining({ number: 1, status: 204 })],
    });
    await processes.kill(restarted);
  });

  it('dispatches again after a SIGKILL during the GitHub call, once the dead worker’s lease expires', async () => {
    // The process must die while GitHub still holds the call: a timeout that ends the call before
    // the kill (a busy machine can take a second between the hang and the kill) would record a
    // first attempt. The lease outlives the timeout, as the configuration requires.
    const shortLease = { ...zektEnv, ZEKT_DISPATCH_TIMEOUT_MS: '4000', ZEKT_LEASE_MS: '5000' };
    const server = await processes.startZekt(zektUrl, shortLease);
    await json('POST', `${sim.url}/_sim/faults`, {
      method: 'POST',
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'hang' }],
    });
    const run = await json('POST', `${sim.url}/_sim/repos/acme/api/runs`, { workflow: 'deploy.yml' });
    expect(run.body.webhooks.map((w: { status: number }) => w.status)).toEqual([202]);
    // The dispatch is in flight (GitHub holds the request) when the process dies.
    await eventually(async () => {
      const journal = (await json('GET', `${sim.url}/_sim/journal`)).body as Array<{
        path: string;
        error?: string;
      }>;
      return journal.some((e) => e.path === '/api/v3/repos/globex/app/dispatches' && e.error === 'hang')
        ? true
        : undefined;
    });
    await processes.kill(server);

    const { metricsUrl } = await processes.startZektWithMetrics(zektUrl, shortLease);
    const correlationId = String(run.body.run.id);
    const record = await eventually(async () => {
      const list = await json('GET', `${zektUrl}/api/v1/deliveries`, undefined, world.alice);
      const found = (
        list.body.deliveries as Array<{
          correlationId: string;
          deliveryId: string;
          dispatch: { state: string };
        }>
      ).find((d) => d.correlationId === correlationId);
      return found?.dispatch.state === 'accepted' ? found : undefined;
    }, 20_000);
    const detail = (
      await json('GET', `${zektUrl}/api/v1/deliveries/${record.deliveryId}`, undefined, world.alice)
    ).body;
    // The interrupted attempt left no record (its process died); the next one is number 2.
    expect(detail.attempts.map((a: { number: number; status: number }) => [a.number, a.status])).toEqual([
      [2, 204],
    ]);
    const dispatched = (await json('GET', `${sim.url}/_sim/dispatches?repository=globex/app`)).body as Array<{
      clientPayload: { zekt: { correlationId: string } };
    }>;
    expect(dispatched.filter((d) => d.clientPayload.zekt.correlationId === correlationId)).toHaveLength(1);
    // The new process saw the gap the dead one left: one lease reclaimed, one attempt accepted.
    const metrics = parsePrometheusText(await (await fetch(`${metricsUrl}/metrics`)).text());
    expect(sampleValue(metrics, 'zekt_lost_leases_total', { kind: 'reclaimed' })).toBe(1);
    expect(sampleValue(metrics, 'zekt_lost_leases_total', { kind: 'taken_over' })).toBe(0);
    expect(
      sampleValue(metrics, 'zekt_dispatch_attempts_total', { result: 'accepted', category: 'none' }),
    ).toBe(1);
  });
});
