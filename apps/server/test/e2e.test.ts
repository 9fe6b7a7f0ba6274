import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completedWorkflowRunExample } from './support/github-examples.js';
import { eventually } from './support/harness.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { json, ProcessGroup, type SimProcessInfo } from './support/processes.js';
import { setUpRemoteWorld } from './support/remote-world.js';

/**
 * End to end, as deployed: the built `zekt serve` and the built `zekt-github-sim` run as separate
 * processes and talk over loopback HTTP only. The completion webhook is GitHub's own documented
 * `workflow_run.completed` example, delivered by the simulator through the hook Zekt placed.
 */
const processes = new ProcessGroup();
let sim: SimProcessInfo;
let zektUrl: string;
let stack: ProcessStack;
let zektEnv: Record<string, string>;

beforeAll(async () => {
  stack = await prepareProcessStack(processes, { name: 'e2e' });
  ({ sim, zektUrl, zektEnv } = stack);
  await processes.startZekt(zektUrl, zektEnv);
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe('end to end: separate processes', () => {
  it('routes a real workflow_run.completed and its message to the consumer as docs/api.md says', async () => {
    const example = completedWorkflowRunExample();
    // biome-ignore lint/suspicious/noExplicitAny: GitHub's example payload is read field by field.
    const exampleRun = example.workflow_run as Record<string, any>;
    const workflowFile = String(exampleRun.path).split('/').pop()!;
    // GitHub installs the App on both organisations (installation.created reaches Zekt); operators
    // hand out API tokens with the CLI; the rest goes through the management API.
    const world = await setUpRemoteWorld({ processes, sim, zektUrl, zektEnv, workflow: workflowFile });
    const apiRepository = world.providerRepository;

    // The run's message step: an Actions OIDC token for the run, then the action's request.
    const runId = 5_000_000_000 + Math.floor(Math.random() * 1_000_000);
    const oidc = await json('POST', `${sim.url}/_sim/oidc/token`, {
      repository: 'acme/api',
      workflow: workflowFile,
      runId,
    });
    expect(oidc.status).toBe(200);
    const message = {
      version: '2.0.0',
      artifacts: [{ name: 'app.tar.gz', sha256: 'ab'.repeat(32) }],
      notes: 'ünïcödé ✓',
    };
    const sent = await fetch(`${zektUrl}/api/events/receive`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${oidc.body.token}`,
        'content-type': 'application/json',
        'x-github-repository': 'acme/api',
      },
      body: JSON.stringify({
        eventType: 'tests-passed',
        payload: JSON.stringify(message),
        repository: 'acme/api',
        workflowRunId: String(runId),
      }),
    });
    expect(sent.status).toBe(201);
    expect(await sent.json()).toMatchObject({ success: true, consumersNotified: 1 });

    // GitHub's example payload, moved into the simulated repository and run.
    const payload = {
      ...example,
      repository: apiRepository,
      workflow_run: { ...exampleRun, id: runId, repository: apiRepository, head_repository: apiRepository },
    };
    const webhook = await json('POST', `${sim.url}/_sim/repos/acme/api/webhooks`, {
      event: 'workflow_run',
      payload,
    });
    expect(webhook.status).toBe(200);
    expect(webhook.body.map((d: { status: number }) => d.status)).toEqual([202]);

    const dispatch = await eventually(async () => {
      const list = (await json('GET', `${sim.url}/_sim/dispatches?repository=globex/app`)).body as unknown[];
      // biome-ignore lint/suspicious/noExplicitAny: the recorded dispatch is checked field by field.
      return list[0] as Record<string, any> | undefined;
    });
    expect(dispatch.repository).toBe('globex/app');
    expect(dispatch.eventType).toBe('tests-passed');
    expect(Object.keys(dispatch.clientPayload)).toEqual(['zekt']);
    const zekt = dispatch.clientPayload.zekt;
    expect(Object.keys(zekt).sort()).toEqual([
      'correlationId',
      'deliveryId',
      'durable',
      'event',
      'isReplay',
      'payload',
      'retry',
      'version',
    ]);
    expect(zekt.version).toBe(1);
    expect(zekt.correlationId).toBe(String(runId));
    expect(zekt.deliveryId).toMatch(
      /^delivery-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
    expect(zekt.durable).toBe(false);
    expect(zekt.isReplay).toBe(false);
    expect(zekt.retry).toBe(0);
    expect(zekt.payload).toEqual(message);
    expect(zekt.event).toEqual({
      repository: 'acme/api',
      workflow: exampleRun.name,
      workflowPath: exampleRun.path,
      runId: String(runId),
      runAttempt: exampleRun.run_attempt,
      runNumber: exampleRun.run_number,
      conclusion: exampleRun.conclusion,
      headBranch: exampleRun.head_branch,
      headSha: exampleRun.head_sha,
      actor: exampleRun.actor.login,
      htmlUrl: exampleRun.html_url,
      completedAt: exampleRun.updated_at,
    });

    // GitHub saw the App mint an installation token for globex before the dispatch.
    const journal = (await json('GET', `${sim.url}/_sim/journal`)).body as Array<{
      method: string;
      path: string;
      status: number;
    }>;
    const calls = journal.map((e) => `${e.method} ${e.path} ${e.status}`);
    const token = calls.findIndex((c) =>
      /^POST \/api\/v3\/app\/installations\/\d+\/access_tokens 201$/.test(c),
    );
    const dispatched = calls.indexOf('POST /api/v3/repos/globex/app/dispatches 204');
    expect(token).toBeGreaterThanOrEqual(0);
    expect(dispatched).toBeGreaterThan(token);
  });
});
