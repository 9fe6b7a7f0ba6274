import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/harness.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { type JsonBody, json, ProcessGroup, type SimProcessInfo } from './support/processes.js';
import { type RemoteWorld, setUpRemoteWorld } from './support/remote-world.js';

/**
 * Durable delivery end to end, as deployed: the built server and simulator as separate processes.
 * The simulator's consumer workflows react to the dispatch like real ones: one confirms and
 * completes through Zekt's API with its own OIDC token (and GitHub also reports its run through the
 * completion-tracking hook), another only runs and fails (the hook alone reports it).
 */
const processes = new ProcessGroup();
let sim: SimProcessInfo;
let zektUrl: string;
let stack: ProcessStack;
let world: RemoteWorld;
type Body = JsonBody;

// biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
const RUN_NAME = 'zekt ${{ github.event.client_payload.zekt.deliveryId }}';

beforeAll(async () => {
  stack = await prepareProcessStack(processes, {
    name: 'e2e-durable',
    env: { ZEKT_RETRY_SCHEDULE: '0ms,200ms,400ms,800ms' },
  });
  ({ sim, zektUrl } = stack);
  const { zektEnv } = stack;
  await processes.startZekt(zektUrl, zektEnv);
  world = await setUpRemoteWorld({ processes, sim, zektUrl, zektEnv, workflow: 'deploy.yml', durable: true });
  for (const workflow of [
    {
      repository: 'globex/app',
      workflow: 'on-release.yml',
      types: ['released'],
      runName: RUN_NAME,
      conclusion: 'success',
      zekt: { url: zektUrl, confirm: true, complete: true, auth: 'oidc' },
    },
    {
      repository: 'globex/app',
      workflow: 'on-broken.yml',
      types: ['broken'],
      runName: RUN_NAME,
      conclusion: 'failure',
    },
  ]) {
    expect((await json('POST', `${sim.url}/_sim/consumer-workflows`, workflow)).status).toBeLessThan(300);
  }
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

async function providerRun(eventType: string, payload: unknown): Promise<Body> {
  const run = await json('POST', `${sim.url}/_sim/repos/acme/api/runs`, {
    workflow: 'deploy.yml',
    message: { zektUrl, eventType, payload },
  });
  expect(run.body.message.status).toBe(201);
  return run.body.run;
}

async function finalRecordOf(correlationId: string): Promise<Body> {
  return eventually(async () => {
    const list = await json('GET', `${zektUrl}/api/v1/deliveries`, undefined, world.alice);
    const found = (list.body.deliveries as Body[]).find(
      (d) => d.correlationId === correlationId && d.isFinalized,
    );
    if (!found) return undefined;
    return (await json('GET', `${zektUrl}/api/v1/deliveries/${found.deliveryId}`, undefined, world.alice))
      .body;
  }, 20_000);
}

describe('durable delivery end to end', () => {
  it('drives a delivery to Completed through the consumer workflow', async () => {
    const run = await providerRun('released', { version: '4.0.0' });
    const record = await finalRecordOf(String(run.id));
    expect(record).toMatchObject({
      deliveryStatus: 'Completed',
      consumerWorkflowConclusion: 'success',
      isFinalized: true,
      durable: true,
      retryNumber: 0,
      isReplay: false,
      eventType: 'released',
      provider: { account: 'acme', repository: 'acme/api', runId: String(run.id), runAttempt: 1 },
      consumer: { account: 'globex', repository: 'globex/app' },
      platformResponse: {
        status: 204,
        headers: expect.objectContaining({ 'x-github-request-id': expect.any(String) }),
      },
    });
    const [dispatched, confirmed, completed] = [
      record.dispatchedAt,
      record.confirmedAt,
      record.completedAt,
    ].map(Date.parse);
    expect(dispatched).toBeLessThanOrEqual(confirmed!);
    expect(confirmed).toBeLessThanOrEqual(completed!);
    expect(record.confirmationAttempts).toBeGreaterThanOrEqual(1);
    // The consumer's run called confirm and complete, and both answered 200 or — for the second
    // report of the same change, from the other path — 409 with the same record.
    const runs = (await json('GET', `${sim.url}/_sim/consumer-runs?repository=globex/app`)).body as Body[];
    const consumerRun = runs.find((r) => r.deliveryId === record.deliveryId)!;
    expect(consumerRun.displayTitle).toBe(`zekt ${record.deliveryId}`);
    expect(consumerRun.calls.map((c: Body) => c.step)).toEqual(['confirm', 'complete']);
    for (const call of consumerRun.calls) expect([200, 409]).toContain(call.status);
  });

  it('drives a delivery to Failed after a retried dispatch, then replays it', async () => {
    await json('POST', `${sim.url}/_sim/faults`, {
      method: 'POST',
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'status', status: 503 }],
    });
    const run = await providerRun('broken', { version: '4.0.1' });
    const record = await finalRecordOf(String(run.id));
    expect(record).toMatchObject({
      deliveryStatus: 'Failed',
      consumerWorkflowConclusion: 'failure',
      isFinalized: true,
      // One failed attempt before GitHub accepted the second: retry 1.
      retryNumber: 1,
      platformResponse: { status: 204 },
    });
    expect(record.attempts.map((a: Body) => [a.status, a.category])).toEqual([
      [503, 'service_unavailable'],
      [204, null],
    ]);
    expect(Date.parse(record.completedAt)).toBeGreaterThanOrEqual(Date.parse(record.dispatchedAt));

    const replay = await json('POST', `${zektUrl}/api/replay/${record.deliveryId}`, undefined, world.bob);
    expect(replay.status).toBe(202);
    const replayed = await eventually(async () => {
      const r = (
        await json('GET', `${zektUrl}/api/v1/deliveries/${replay.body.deliveryId}`, undefined, world.alice)
      ).body;
      return r.isFinalized ? r : undefined;
    }, 20_000);
    expect(replayed).toMatchObject({
      deliveryStatus: 'Failed',
      retryNumber: 0,
      isReplay: true,
      replayOf: record.deliveryId,
    });
    const original = (
      await json('GET', `${zektUrl}/api/v1/deliveries/${record.deliveryId}`, undefined, world.alice)
    ).body;
    expect(original.replayedBy).toBe(replay.body.deliveryId);

    const connections = (await json('GET', `${zektUrl}/api/v1/connections`, undefined, world.bob)).body
      .connections;
    expect(connections[0]).toMatchObject({
      id: world.subscriptionId,
      stats: { last24h: { total: 3, succeeded: 1, failed: 2 } },
    });
    expect(connections[0].health).toBe('Critical');
    const diagnostics = (
      await json(
        'GET',
        `${zektUrl}/api/connections/${world.subscriptionId}/diagnostics`,
        undefined,
        world.bob,
      )
    ).body;
    expect(diagnostics.categories.service_unavailable).toBe(1);
    expect(diagnostics.consumerFailures).toBe(2);
  });

  it('shows delivery status and replays from the zekt CLI', async () => {
    const cli = (args: string[]) =>
      processes.run(['deliveries', ...args, '--url', zektUrl, '--token', world.alice], {});
    const listed = await cli(['list', '--status', 'Completed']);
    const lines = listed.trim().split('\n');
    expect(lines[0]).toBe(
      'DELIVERY\tSTATUS\tRETRY\tDISPATCHED\tCONFIRMED\tCOMPLETED\tCONSUMER\tCONSUMER RUN',
    );
    // repository_dispatch deliveries have no consumer run GitHub named.
    expect(lines.slice(1).every((line) => line.endsWith('\tglobex/app\t-'))).toBe(true);
    expect(lines.slice(1).every((line) => /^delivery-\S+\tCompleted\t0\t/.test(line))).toBe(true);
    const deliveryId = lines[1]!.split('\t')[0]!;
    expect(JSON.parse(await cli(['show', deliveryId]))).toMatchObject({
      deliveryId,
      deliveryStatus: 'Completed',
    });
    expect(await cli(['replay', deliveryId])).toMatch(
      new RegExp(`^replayed as delivery-\\S+ \\(replay of ${deliveryId}\\)\\n$`),
    );
  });
});
