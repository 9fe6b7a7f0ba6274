import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/harness.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { type JsonBody, json, ProcessGroup, type SimProcessInfo } from './support/processes.js';
import { type RemoteWorld, setUpRemoteWorld } from './support/remote-world.js';

/**
 * Delivery by `workflow_dispatch`, as deployed: the built server and the simulator as
 * separate processes, on the test project's store. A subscription of globex/app switches to a
 * workflow of its repository; GitHub (the simulator) answers each dispatch with the run it created,
 * so the delivery records that run and reaches its end with no step in the consumer workflow:
 * Zekt reads the run itself when COMPLETION is off, and matches the run's webhooks by id when it is
 * on (reading nothing). Then what goes wrong: a workflow GitHub does not have, one without the
 * trigger or with other inputs, an installation without Actions: write, a run cancelled or deleted,
 * a run never picked up; and a GitHub Enterprise Server that refuses `return_run_details`.
 */
const processes = new ProcessGroup();
let stack: ProcessStack;
let sim: SimProcessInfo;
let zektUrl: string;
let world: RemoteWorld;
/** initech/legacy: an installation that has not accepted Actions: write, and carol's subscription. */
let carol: string;
let legacySubscriptionId: string;

// biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
const RUN_NAME = 'zekt ${{ fromJSON(inputs.zekt).deliveryId }}';
const ZEKT_INPUT = { zekt: { description: 'the Zekt delivery', required: true, type: 'string' } };

beforeAll(async () => {
  stack = await prepareProcessStack(processes, {
    name: 'workflow-dispatch',
    env: {
      ZEKT_RETRY_SCHEDULE: '0ms,200ms,200ms',
      ZEKT_RUN_FOLLOW_SCHEDULE: '200ms,300ms',
      ZEKT_INSTALLATION_DISPATCH_RATE: '0',
      ZEKT_NOT_STARTED_AFTER: '1s',
      ZEKT_POLL_INTERVAL_MS: '200',
    },
  });
  ({ sim, zektUrl } = stack);
  await processes.startZekt(zektUrl, stack.zektEnv);
  world = await setUpRemoteWorld({ processes, sim, zektUrl, zektEnv: stack.zektEnv, workflow: 'deploy.yml' });

  const legacy = await json('POST', `${sim.url}/_sim/installations`, {
    account: { login: 'initech', type: 'Organization' },
    repositories: ['legacy'],
    sender: { login: 'carol' },
    permissions: { metadata: 'read', contents: 'write', actions: 'read' },
  });
  expect(legacy.status).toBe(201);
  carol = (await processes.run(['token', 'create', '--login', 'carol'], stack.zektEnv))
    .trim()
    .split('\n')
    .pop()!;
  const requested = await json(
    'POST',
    `${zektUrl}/api/v1/subscriptions`,
    { serviceId: world.serviceId, deliversTo: 'initech/legacy' },
    carol,
  );
  expect(requested.status).toBe(201);
  legacySubscriptionId = requested.body.id;
  expect(
    (
      await json(
        'POST',
        `${zektUrl}/api/v1/subscriptions/${legacySubscriptionId}/approve`,
        undefined,
        world.alice,
      )
    ).status,
  ).toBe(200);

  for (const workflow of [
    { repository: 'globex/app', workflow: 'on-zekt.yml', startDelayMs: 300, durationMs: 300 },
    { repository: 'globex/app', workflow: 'cancelled.yml', conclusion: 'cancelled' },
    { repository: 'globex/app', workflow: 'deleted.yml', deleteRun: true, durationMs: 200 },
    { repository: 'globex/app', workflow: 'queued.yml', neverStart: true },
    { repository: 'initech/legacy', workflow: 'on-zekt.yml' },
  ]) {
    const defined = await json('POST', `${sim.url}/_sim/consumer-workflows`, {
      on: { workflow_dispatch: { inputs: ZEKT_INPUT } },
      runName: RUN_NAME,
      ...workflow,
    });
    expect(defined.status).toBe(201);
  }
  // A workflow without the trigger, and one that declares other inputs.
  for (const workflow of [
    { workflow: 'on-push.yml', on: { repository_dispatch: {} } },
    // No run-name: only the run's id tells which delivery it is.
    {
      workflow: 'plain.yml',
      on: { workflow_dispatch: { inputs: ZEKT_INPUT } },
      startDelayMs: 200,
      durationMs: 200,
    },
    { workflow: 'strict.yml', on: { workflow_dispatch: { inputs: { version: { required: true } } } } },
  ]) {
    expect(
      (await json('POST', `${sim.url}/_sim/consumer-workflows`, { repository: 'globex/app', ...workflow }))
        .status,
    ).toBe(201);
  }
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

async function patch(body: unknown, token = world.bob, id = world.subscriptionId) {
  return json('PATCH', `${zektUrl}/api/v1/subscriptions/${id}`, body, token);
}

async function deliverTo(workflow: string): Promise<void> {
  const response = await patch({ deliveryMode: 'workflow_dispatch', workflow, durable: true });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

async function providerRun(): Promise<string> {
  const run = await json('POST', `${sim.url}/_sim/repos/acme/api/runs`, {
    workflow: 'deploy.yml',
    message: { zektUrl, eventType: 'acme-deployed', payload: { version: '6.0.0' } },
  });
  expect(run.body.message.status).toBe(201);
  return String(run.body.run.id);
}

async function recordOf(
  runId: string,
  token: string,
  done: (record: JsonBody) => boolean,
): Promise<JsonBody> {
  return eventually(async () => {
    const list = await json('GET', `${zektUrl}/api/v1/deliveries?runId=${runId}`, undefined, token);
    const found = (list.body.deliveries as JsonBody[] | undefined)?.[0];
    if (!found || !done(found)) return undefined;
    return (await json('GET', `${zektUrl}/api/v1/deliveries/${found.deliveryId}`, undefined, token)).body;
  }, 20_000);
}

/** Completed or Failed (a delivery GitHub never accepted is Failed without being finalized by a run). */
const finalRecordOf = (runId: string, token = world.bob) =>
  recordOf(runId, token, (d) => d.deliveryStatus === 'Completed' || d.deliveryStatus === 'Failed');

async function journal(): Promise<JsonBody[]> {
  return (await json('GET', `${sim.url}/_sim/journal`)).body;
}

async function diagnostics(id = world.subscriptionId, token = world.bob): Promise<JsonBody> {
  const response = await json('GET', `${zektUrl}/api/connections/${id}/diagnostics`, undefined, token);
  expect(response.status).toBe(200);
  return response.body;
}

/** The simulator's answers to `GET …/actions/runs/{runId}` of a consumer run. */
async function readsOf(runId: number): Promise<JsonBody[]> {
  return (await journal()).filter(
    (entry) => entry.method === 'GET' && entry.path === `/api/v3/repos/globex/app/actions/runs/${runId}`,
  );
}

const recommendation = (report: JsonBody, category: string): string =>
  (report.recommendations as JsonBody[]).find((r) => r.category === category)?.text ?? '';

describe('PATCH /api/v1/subscriptions/{id}: the delivery mode', () => {
  it.each([
    [{ deliveryMode: 'workflow_dispatch' }, 'invalid_request', 'needs the workflow'],
    [{ deliveryMode: 'workflow_dispatch', workflow: '../on-zekt.yml' }, 'invalid_workflow_file', 'file name'],
    [{ deliveryMode: 'workflow_dispatch', workflow: 'on-zekt.json' }, 'invalid_workflow_file', 'file name'],
    [{ deliveryMode: 'workflow_dispatch', workflow: 'on zekt.yml' }, 'invalid_workflow_file', 'file name'],
    [
      { deliveryMode: 'workflow_dispatch', workflow: 'on-zekt.yml', ref: 'main..dev' },
      'invalid_ref',
      'branch or tag',
    ],
    [
      { deliveryMode: 'workflow_dispatch', workflow: 'on-zekt.yml', ref: 'refs/heads/x.lock' },
      'invalid_ref',
      'branch or tag',
    ],
    [
      { deliveryMode: 'workflow_dispatch', workflow: 'on-zekt.yml', ref: '-x' },
      'invalid_ref',
      'branch or tag',
    ],
    [
      { deliveryMode: 'workflow_dispatch', workflow: 'on-zekt.yml', ref: 'a b' },
      'invalid_ref',
      'branch or tag',
    ],
    [
      { deliveryMode: 'repository_dispatch', workflow: 'on-zekt.yml' },
      'invalid_request',
      'workflow_dispatch only',
    ],
    [{ deliveryMode: 'carrier_pigeon' }, 'invalid_request', 'deliveryMode'],
    [{ workflow: 'x'.repeat(300) }, 'invalid_request', 'workflow'],
    [{}, 'invalid_request', ''],
  ])('refuses %j with a problem', async (body, code, words) => {
    const response = await patch(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 400, code });
    expect(response.body.detail).toContain(words);
    const stored = (
      await json('GET', `${zektUrl}/api/v1/subscriptions/${world.subscriptionId}`, undefined, world.bob)
    ).body;
    expect(stored).toMatchObject({
      deliveryMode: 'repository_dispatch',
      workflowDispatch: null,
      durable: false,
    });
  });

  it('answers problem+json, and keeps Durable Delivery tied to COMPLETION in repository_dispatch mode', async () => {
    const response = await fetch(`${zektUrl}/api/v1/subscriptions/${world.subscriptionId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${world.bob}`, 'content-type': 'application/json' },
      body: JSON.stringify({ deliveryMode: 'workflow_dispatch', workflow: 'a.yml', ref: 'a..b' }),
    });
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const refused = await patch({ durable: true });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('completion_tracking_disabled');
    expect(refused.body.detail).toContain('deliver by workflow_dispatch');
    // Alice provides the service: only the consumer chooses how it is delivered.
    expect((await patch({ deliveryMode: 'repository_dispatch' }, world.alice)).status).toBe(404);
  });
});

describe('delivery by workflow_dispatch, COMPLETION off: Zekt follows the run', () => {
  it('records the consumer run and reaches Completed with no confirm or complete step', async () => {
    await deliverTo('on-zekt.yml');
    const runId = await providerRun();
    const record = await finalRecordOf(runId);
    const dispatches = (await json('GET', `${sim.url}/_sim/workflow-dispatches?repository=globex/app`))
      .body as JsonBody[];
    const dispatch = dispatches.at(-1)!;
    expect(dispatch).toMatchObject({ workflow: 'on-zekt.yml', ref: 'main', returnRunDetails: true });
    const zekt = JSON.parse(dispatch.inputs.zekt);
    expect(zekt).toMatchObject({
      version: 1,
      correlationId: runId,
      deliveryId: record.deliveryId,
      durable: true,
      payload: { version: '6.0.0' },
      token: expect.any(String),
    });
    expect(record).toMatchObject({
      deliveryStatus: 'Completed',
      consumerWorkflowConclusion: 'success',
      isFinalized: true,
      notStartedAt: null,
      platformResponse: { status: 200 },
      consumerRun: {
        id: dispatch.runId,
        url: `${sim.apiUrl}/repos/globex/app/actions/runs/${dispatch.runId}`,
        htmlUrl: `${sim.url}/globex/app/actions/runs/${dispatch.runId}`,
      },
    });
    expect(record.confirmedAt).not.toBeNull();
    const runs = (await json('GET', `${sim.url}/_sim/consumer-runs?repository=globex/app`))
      .body as JsonBody[];
    const consumerRun = runs.find((r) => r.id === dispatch.runId)!;
    expect(consumerRun).toMatchObject({
      trigger: 'workflow_dispatch',
      deliveryId: record.deliveryId,
      calls: [],
    });
    // Zekt read the run (no webhook reached it: COMPLETION is off), and placed no hook in globex/app.
    const reads = await readsOf(dispatch.runId);
    expect(reads.length).toBeGreaterThanOrEqual(1);
    expect(reads.every((entry) => entry.status === 200)).toBe(true);
    // The CLI's Delivery Status names the run too.
    const listed = await processes.run(['deliveries', 'list', '--url', zektUrl, '--token', world.bob], {});
    const line = listed.split('\n').find((l) => l.startsWith(`${record.deliveryId}\t`));
    expect(line?.split('\t')).toEqual([
      record.deliveryId,
      'Completed',
      '0',
      record.dispatchedAt,
      record.confirmedAt,
      record.completedAt,
      'globex/app',
      record.consumerRun.htmlUrl,
    ]);
  });

  it('counts a run GitHub created as started: a run left queued is never flagged not started', async () => {
    await deliverTo('queued.yml');
    const runId = await providerRun();
    const record = await recordOf(runId, world.bob, (d) => d.consumerRun !== null);
    // Well past ZEKT_NOT_STARTED_AFTER (1 s): six reads of the queued run take 1.7 s.
    await eventually(async () => {
      const reads = await readsOf(record.consumerRun.id);
      return reads.length >= 6 ? reads : undefined;
    }, 20_000);
    const later = (
      await json('GET', `${zektUrl}/api/v1/deliveries/${record.deliveryId}`, undefined, world.bob)
    ).body;
    expect(later).toMatchObject({ deliveryStatus: 'Dispatched', notStartedAt: null, confirmedAt: null });
    expect((await diagnostics()).categories.not_started).toBe(0);
  });
});

describe('what goes wrong, each a Failed delivery that says why', () => {
  it('an unknown workflow file fails at once, not retried, naming the file', async () => {
    await deliverTo('missing.yml');
    const record = await finalRecordOf(await providerRun());
    expect(record).toMatchObject({
      deliveryStatus: 'Failed',
      failureReason: 'workflow_not_found',
      consumerRun: null,
    });
    expect(record.attempts).toHaveLength(1);
    expect(record.attempts[0]).toMatchObject({ status: 404, category: 'not_found' });
    expect(record.attempts[0].message).toContain('.github/workflows/missing.yml');
    expect(recommendation(await diagnostics(), 'not_found')).toContain('.github/workflows/missing.yml');
  });

  it.each([
    ['on-push.yml', "Workflow does not have 'workflow_dispatch' trigger"],
    ['strict.yml', 'Unexpected inputs provided: ["zekt"]'],
  ])('%s (%s) fails at once, the fix in diagnostics', async (workflow, message) => {
    await deliverTo(workflow);
    const record = await finalRecordOf(await providerRun());
    expect(record).toMatchObject({ deliveryStatus: 'Failed', failureReason: 'dispatch_rejected' });
    expect(record.attempts).toHaveLength(1);
    expect(record.attempts[0]).toMatchObject({ status: 422, category: 'rejected' });
    expect(record.attempts[0].message).toContain(message);
    expect(record.attempts[0].message).toContain(`.github/workflows/${workflow}`);
    const report = await diagnostics();
    expect(report.recentFailures[0]).toMatchObject({ deliveryId: record.deliveryId, status: 422 });
    expect(report.recentFailures[0].message).toContain(message);
    const fix = recommendation(report, 'rejected');
    expect(fix).toContain(`workflow_dispatch to ${workflow} of globex/app`);
    expect(fix).toContain('`on: workflow_dispatch: inputs: zekt: { required: true, type: string }`');
  });

  it('an installation without Actions: write gets 403; diagnostics name the permission and where to accept it', async () => {
    const switched = await patch(
      { deliveryMode: 'workflow_dispatch', workflow: 'on-zekt.yml', durable: true },
      carol,
      legacySubscriptionId,
    );
    expect(switched.status).toBe(200);
    const record = await finalRecordOf(await providerRun(), carol);
    // Retried like any refusal of credentials (the owner may accept the permission meanwhile).
    expect(record).toMatchObject({ deliveryStatus: 'Failed', failureReason: 'dispatch_exhausted' });
    expect(record.attempts.map((a: JsonBody) => [a.status, a.category])).toEqual([
      [403, 'auth'],
      [403, 'auth'],
      [403, 'auth'],
    ]);
    expect(record.attempts[0].headers['x-accepted-github-permissions']).toBe('actions=write');
    expect(record.attempts[0].message).toContain('GitHub needs actions=write');
    const report = await diagnostics(legacySubscriptionId, carol);
    expect(report.categories.auth).toBe(3);
    const fix = recommendation(report, 'auth');
    expect(fix).toContain('"Actions: read & write" repository permission (actions: write)');
    expect(fix).toContain("accepts the App's new permissions in the installation's settings");
  });

  it.each([
    ['cancelled.yml', 'consumer_run_cancelled'],
    ['deleted.yml', 'consumer_run_deleted'],
  ])('a run that ends %s fails the delivery with %s', async (workflow, reason) => {
    await deliverTo(workflow);
    const record = await finalRecordOf(await providerRun());
    expect(record).toMatchObject({
      deliveryStatus: 'Failed',
      failureReason: reason,
      consumerWorkflowConclusion: 'failure',
      dispatch: { state: 'accepted' },
    });
    expect(record.consumerRun).not.toBeNull();
    expect(record.attempts).toHaveLength(1);
  });
});

describe('delivery by workflow_dispatch, COMPLETION on', () => {
  it('matches the run’s webhooks by its id and reads nothing', async () => {
    const tracking = await json(
      'PUT',
      `${zektUrl}/api/v1/repositories/globex/app/completion-tracking`,
      { enabled: true },
      world.bob,
    );
    expect(tracking.status).toBe(200);
    await deliverTo('plain.yml');
    await json('DELETE', `${sim.url}/_sim/journal`);
    const record = await finalRecordOf(await providerRun());
    expect(record).toMatchObject({ deliveryStatus: 'Completed', consumerWorkflowConclusion: 'success' });
    expect(record.confirmedAt).not.toBeNull();
    expect(Date.parse(record.confirmedAt)).toBeLessThan(Date.parse(record.completedAt));
    expect(await readsOf(record.consumerRun.id)).toEqual([]);
    // The run's webhooks reached Zekt, and were what completed it. Zekt's state is committed before
    // its answer reaches the simulator, so wait until the simulator has recorded the last answer.
    const consumerRun = await eventually(async () => {
      const runs = (await json('GET', `${sim.url}/_sim/consumer-runs?repository=globex/app`))
        .body as JsonBody[];
      const run = runs.find((r) => r.id === record.consumerRun.id)!;
      const answered = run.webhooks.filter(
        (w: JsonBody) => w.hookType === 'repository' && w.status !== undefined,
      );
      return answered.some((w: JsonBody) => w.action === 'completed') ? run : undefined;
    });
    expect(
      consumerRun.webhooks
        .filter((w: JsonBody) => w.hookType === 'repository')
        .map((w: JsonBody) => [w.action, w.status, JSON.parse(w.responseBody).detail]),
    ).toEqual([
      ['requested', 202, `${record.deliveryId} has a workflow run; it is no longer awaited`],
      ['in_progress', 200, `${record.deliveryId} is Confirmed`],
      ['completed', 200, `${record.deliveryId} is Completed`],
    ]);
    // Nothing in the run's name says which delivery it is: its id did.
    expect(consumerRun.displayTitle).toBe('Plain');

    await deliverTo('cancelled.yml');
    const cancelled = await finalRecordOf(await providerRun());
    expect(cancelled).toMatchObject({ deliveryStatus: 'Failed', failureReason: 'consumer_run_cancelled' });
    expect(await readsOf(cancelled.consumerRun.id)).toEqual([]);
  });
});

describe('a GitHub Enterprise Server that refuses return_run_details', () => {
  it('is asked again without it, remembered, and its runs are matched by run name', async () => {
    await deliverTo('on-zekt.yml');
    expect((await json('PUT', `${sim.url}/_sim/ghes`, { version: '3.20' })).status).toBe(200);
    await json('DELETE', `${sim.url}/_sim/journal`);
    const first = await finalRecordOf(await providerRun());
    expect(first).toMatchObject({
      deliveryStatus: 'Completed',
      consumerRun: null,
      platformResponse: { status: 204 },
    });
    const posts = () =>
      journal().then((entries) =>
        entries
          .filter(
            (e) =>
              e.method === 'POST' &&
              e.path === '/api/v3/repos/globex/app/actions/workflows/on-zekt.yml/dispatches',
          )
          .map((e) => [e.status, 'return_run_details' in (e.requestBody as JsonBody)]),
      );
    expect(await posts()).toEqual([
      [422, true],
      [204, false],
    ]);
    // One attempt: the second call is the same attempt, asked again.
    expect(first.attempts).toHaveLength(1);
    expect(first.attempts[0]).toMatchObject({ status: 204 });

    const second = await finalRecordOf(await providerRun());
    expect(second).toMatchObject({ deliveryStatus: 'Completed', consumerRun: null });
    expect(await posts()).toEqual([
      [422, true],
      [204, false],
      [204, false],
    ]);
  });
});
