import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { api, installationToken } from '../test/support/github-client.js';
import { type Receiver, startReceiver } from '../test/support/http-receiver.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import { waitUntil } from '../test/support/wait-until.js';
import type { GitHubSimulator } from './index.js';

const DELIVERY_ID = 'delivery-0b6d2a52-54a4-4a5c-9d7e-6c1f3f6f7e10';
const DELIVERY_TOKEN = `zdt_${'b'.repeat(43)}`;
const ZEKT = JSON.stringify({
  version: 1,
  correlationId: '9000000001',
  deliveryId: DELIVERY_ID,
  durable: true,
  token: DELIVERY_TOKEN,
});

let sim: GitHubSimulator;
let hooks: Receiver;
let zekt: Receiver;
let token: string;
let readerToken: string;
const definitions: string[] = [];

beforeAll(async () => {
  hooks = await startReceiver();
  zekt = await startReceiver(() => ({ status: 200, body: { deliveryStatus: 'Confirmed' } }));
  sim = await createTestSimulator({ allowPrivateHookUrls: true });
  const { installation } = await sim.createInstallation({
    account: { login: 'acme', type: 'Organization' },
    repositories: ['consumer'],
  });
  token = `token ${await installationToken(sim, installation.id)}`;
  // An installation that has not accepted Actions: write (the App's permissions before this mode).
  const reader = await sim.createInstallation({
    account: { login: 'reader' },
    repositories: ['app'],
    permissions: { metadata: 'read', contents: 'write', actions: 'read' },
  });
  readerToken = `token ${await installationToken(sim, reader.installation.id)}`;
  await api(sim, 'POST', '/repos/acme/consumer/hooks', {
    authorization: token,
    body: { config: { url: `${hooks.url}/hook`, content_type: 'json' }, events: ['workflow_run'] },
  });
});
afterAll(async () => {
  await sim.close();
  await hooks.close();
  await zekt.close();
});
afterEach(() => {
  for (const id of definitions.splice(0)) sim.removeConsumerWorkflow(id);
  sim.setGhesVersion(null);
});

function define(input: Omit<Parameters<GitHubSimulator['defineConsumerWorkflow']>[0], 'repository'>) {
  const { id } = sim.defineConsumerWorkflow({ repository: 'acme/consumer', ...input });
  definitions.push(id);
  return id;
}

const ZEKT_INPUT = { zekt: { description: 'the Zekt delivery', required: true, type: 'string' as const } };

function dispatch(workflow: string, body: unknown, authorization = token, repo = 'acme/consumer') {
  return api(sim, 'POST', `/repos/${repo}/actions/workflows/${workflow}/dispatches`, {
    authorization,
    body,
  });
}

function runOf(runId: number) {
  return waitUntil(
    () =>
      sim
        .consumerRuns()
        .find((run) => run.id === runId && run.status !== 'queued' && run.status !== 'in_progress'),
    `run ${runId} to end`,
  );
}

describe('workflow_dispatch', () => {
  it('answers 200 with the run it created when asked, and the run’s webhooks and GET carry that id', async () => {
    define({
      workflow: 'on-zekt.yml',
      name: 'On Zekt',
      on: { workflow_dispatch: { inputs: ZEKT_INPUT } },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
      runName: 'zekt ${{ fromJSON(inputs.zekt).deliveryId }}',
      zekt: { url: zekt.url, confirm: true, complete: true, auth: 'delivery-token' },
    });
    const response = await dispatch('on-zekt.yml', {
      ref: 'main',
      inputs: { zekt: ZEKT },
      return_run_details: true,
    });
    expect(response.status).toBe(200);
    const details = response.body as { workflow_run_id: number; run_url: string; html_url: string };
    const runId = details.workflow_run_id;
    expect(details).toEqual({
      workflow_run_id: runId,
      run_url: `${sim.apiUrl}/repos/acme/consumer/actions/runs/${runId}`,
      html_url: `${sim.url}/acme/consumer/actions/runs/${runId}`,
    });
    expect(sim.workflowDispatches({ repository: 'acme/consumer' }).at(-1)).toMatchObject({
      repository: 'acme/consumer',
      workflow: 'on-zekt.yml',
      ref: 'main',
      inputs: { zekt: ZEKT },
      returnRunDetails: true,
      runId,
    });

    const run = await runOf(runId);
    expect(run).toMatchObject({
      trigger: 'workflow_dispatch',
      eventType: null,
      displayTitle: `zekt ${DELIVERY_ID}`,
      deliveryId: DELIVERY_ID,
      correlationId: '9000000001',
      status: 'completed',
      conclusion: 'success',
      calls: [
        { step: 'confirm', status: 200 },
        { step: 'complete', status: 200 },
      ],
    });
    expect(run.event).toMatchObject({
      inputs: { zekt: ZEKT },
      ref: 'refs/heads/main',
      workflow: '.github/workflows/on-zekt.yml',
    });
    const calls = zekt.requests.filter(
      (request) => request.headers.authorization === `Bearer ${DELIVERY_TOKEN}`,
    );
    expect(calls.map((call) => [call.path, call.json])).toEqual([
      ['/api/event-delivery/confirm', { correlationId: '9000000001', deliveryId: DELIVERY_ID }],
      [
        '/api/event-delivery/complete',
        { correlationId: '9000000001', deliveryId: DELIVERY_ID, success: true },
      ],
    ]);

    const hooked = hooks.requests.filter(
      (request) => (request.json as { workflow_run?: { id?: number } }).workflow_run?.id === runId,
    );
    expect(hooked.map((request) => (request.json as { action: string }).action)).toEqual([
      'requested',
      'in_progress',
      'completed',
    ]);
    for (const request of hooked) {
      expect((request.json as { workflow_run: Record<string, unknown> }).workflow_run).toMatchObject({
        event: 'workflow_dispatch',
        display_title: `zekt ${DELIVERY_ID}`,
        path: '.github/workflows/on-zekt.yml',
      });
    }
    const read = await api(sim, 'GET', `/repos/acme/consumer/actions/runs/${runId}`, {
      authorization: token,
    });
    expect(read.body).toMatchObject({
      id: runId,
      status: 'completed',
      conclusion: 'success',
      event: 'workflow_dispatch',
    });
  });

  it('answers 204 without return_run_details, and takes the workflow by id and a full ref', async () => {
    define({ workflow: 'plain.yml', on: { workflow_dispatch: {} } });
    const first = await dispatch('plain.yml', { ref: 'refs/heads/main' });
    expect(first).toMatchObject({ status: 204, body: null });
    const { runId } = sim.workflowDispatches().at(-1)!;
    const run = (
      await api(sim, 'GET', `/repos/acme/consumer/actions/runs/${runId}`, { authorization: token })
    ).body as { workflow_id: number };
    const byId = await dispatch(String(run.workflow_id), { ref: 'main', return_run_details: false });
    expect(byId.status).toBe(204);
    expect(sim.workflowDispatches().at(-1)).toMatchObject({ workflow: 'plain.yml', returnRunDetails: false });
  });

  it('refuses what GitHub refuses, with GitHub’s statuses and messages', async () => {
    define({ workflow: 'push-only.yml', on: { repository_dispatch: { types: ['x'] } } });
    define({ workflow: 'typed.yml', on: { workflow_dispatch: { inputs: { version: { required: true } } } } });
    const cases: Array<[string, unknown, number, string]> = [
      ['missing.yml', { ref: 'main' }, 404, 'Not Found'],
      ['push-only.yml', { ref: 'main' }, 422, "Workflow does not have 'workflow_dispatch' trigger"],
      [
        'typed.yml',
        { ref: 'main', inputs: { version: '1', zekt: ZEKT } },
        422,
        'Unexpected inputs provided: ["zekt"]',
      ],
      ['typed.yml', { ref: 'main' }, 422, "Required input 'version' not provided"],
      ['typed.yml', { ref: 'release', inputs: { version: '1' } }, 422, 'No ref found for: release'],
      ['typed.yml', { inputs: { version: '1' } }, 422, 'Invalid request.\n\n"ref" wasn\'t supplied.'],
      ['typed.yml', { ref: 'main', extra: 1 }, 422, 'Invalid request.\n\n"extra" is not a permitted key.'],
      [
        'typed.yml',
        { ref: 'main', inputs: Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`i${i}`, 'x'])) },
        422,
        'Invalid request.\n\nNo more than 25 properties are allowed; 26 were supplied.',
      ],
    ];
    for (const [workflow, body, status, message] of cases) {
      const response = await dispatch(workflow, body);
      expect([workflow, response.status, (response.body as { message: string }).message]).toEqual([
        workflow,
        status,
        message,
      ]);
    }
    const big = await dispatch('typed.yml', { ref: 'main', inputs: { version: 'x'.repeat(65_536) } });
    expect(big.status).toBe(422);
    expect(
      sim
        .workflowDispatches()
        .filter((d) => ['missing.yml', 'push-only.yml', 'typed.yml'].includes(d.workflow)),
    ).toEqual([]);
  });

  it('answers 403 naming actions=write to an installation without Actions: write', async () => {
    sim.defineConsumerWorkflow({
      repository: 'reader/app',
      workflow: 'on-zekt.yml',
      on: { workflow_dispatch: {} },
    });
    const response = await dispatch('on-zekt.yml', { ref: 'main' }, readerToken, 'reader/app');
    expect(response.status).toBe(403);
    expect((response.body as { message: string }).message).toBe('Resource not accessible by integration');
    expect(response.headers.get('x-accepted-github-permissions')).toBe('actions=write');
  });

  it('as GitHub Enterprise Server 3.20, refuses return_run_details and takes at most 10 inputs', async () => {
    define({ workflow: 'ghes.yml', on: { workflow_dispatch: { inputs: ZEKT_INPUT } } });
    sim.setGhesVersion('3.20');
    const refused = await dispatch('ghes.yml', {
      ref: 'main',
      inputs: { zekt: ZEKT },
      return_run_details: true,
    });
    expect(refused.status).toBe(422);
    expect((refused.body as { message: string }).message).toBe(
      'Invalid request.\n\n"return_run_details" is not a permitted key.',
    );
    expect((await dispatch('ghes.yml', { ref: 'main', inputs: { zekt: ZEKT } })).status).toBe(204);
    const many = await dispatch('ghes.yml', {
      ref: 'main',
      inputs: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`i${i}`, 'x'])),
    });
    expect((many.body as { message: string }).message).toContain('No more than 10 properties');
    sim.setGhesVersion('3.21');
    expect(
      (await dispatch('ghes.yml', { ref: 'main', inputs: { zekt: ZEKT }, return_run_details: true })).status,
    ).toBe(200);
    expect(() => sim.setGhesVersion('three')).toThrow(/major\.minor/);
  });

  it('scripts runs that fail, are cancelled, are deleted, or are never picked up', async () => {
    const runIdOf = async (workflow: string) => {
      const response = await dispatch(workflow, { ref: 'main', return_run_details: true });
      expect(response.status).toBe(200);
      return (response.body as { workflow_run_id: number }).workflow_run_id;
    };
    define({ workflow: 'fails.yml', on: { workflow_dispatch: {} }, conclusion: 'failure' });
    define({ workflow: 'cancelled.yml', on: { workflow_dispatch: {} }, conclusion: 'cancelled' });
    define({ workflow: 'deleted.yml', on: { workflow_dispatch: {} }, deleteRun: true });
    define({ workflow: 'queued.yml', on: { workflow_dispatch: {} }, neverStart: true });

    expect(await runOf(await runIdOf('fails.yml'))).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
    });
    const cancelled = await runIdOf('cancelled.yml');
    expect(await runOf(cancelled)).toMatchObject({ status: 'completed', conclusion: 'cancelled' });
    const read = await api(sim, 'GET', `/repos/acme/consumer/actions/runs/${cancelled}`, {
      authorization: token,
    });
    expect(read.body).toMatchObject({ status: 'completed', conclusion: 'cancelled' });

    const deleted = await runIdOf('deleted.yml');
    expect(await runOf(deleted)).toMatchObject({ status: 'deleted', conclusion: null });
    expect(
      (await api(sim, 'GET', `/repos/acme/consumer/actions/runs/${deleted}`, { authorization: token }))
        .status,
    ).toBe(404);
    const deletedHooks = hooks.requests.filter(
      (request) => (request.json as { workflow_run?: { id?: number } }).workflow_run?.id === deleted,
    );
    expect(deletedHooks.map((request) => (request.json as { action: string }).action)).toEqual([
      'requested',
      'in_progress',
    ]);

    const queued = await runIdOf('queued.yml');
    await waitUntil(
      () => sim.consumerRuns().find((run) => run.id === queued && run.webhooks.length > 0),
      'the queued run’s requested webhook',
    );
    expect(
      (await api(sim, 'GET', `/repos/acme/consumer/actions/runs/${queued}`, { authorization: token })).body,
    ).toMatchObject({
      status: 'queued',
    });
  });

  it('checks consumer workflow definitions', () => {
    const base = { repository: 'acme/consumer', workflow: 'x.yml' };
    expect(() => sim.defineConsumerWorkflow({ ...base, types: ['a'], on: {} })).toThrow(/not types, with on/);
    expect(() => sim.defineConsumerWorkflow({ ...base, on: { push: {} } as never })).toThrow(
      /repository_dispatch and workflow_dispatch only/,
    );
    expect(() =>
      sim.defineConsumerWorkflow({
        ...base,
        on: { workflow_dispatch: { inputs: { a: { type: 'file' as never } } } },
      }),
    ).toThrow(/type must be one of/);
    expect(() => sim.defineConsumerWorkflow({ ...base, deleteRun: 'yes' as never })).toThrow(
      /deleteRun must be a boolean/,
    );
  });

  it('is driven over the control API too', async () => {
    const ghes = await fetch(`${sim.url}/_sim/ghes`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ version: '3.19' }),
    });
    expect(ghes.status).toBe(200);
    define({ workflow: 'control.yml', on: { workflow_dispatch: {} } });
    expect((await dispatch('control.yml', { ref: 'main', return_run_details: true })).status).toBe(422);
    const listed = (await (
      await fetch(`${sim.url}/_sim/workflow-dispatches?repository=acme/consumer`)
    ).json()) as unknown[];
    expect(listed.length).toBe(sim.workflowDispatches({ repository: 'acme/consumer' }).length);
    const bad = await fetch(`${sim.url}/_sim/ghes`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({}),
    });
    expect(bad.status).toBe(400);
  });
});
