import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setUpWorld, type World } from '../../../apps/server/test/support/demo-world.js';
import { eventually, type Harness, startHarness } from '../../../apps/server/test/support/harness.js';
import { startProviderRun, startUnregisteredRun } from './support/provider-run.js';
import { type Relay, startRelay } from './support/relay.js';
import { type ActionStepResult, runActionStep } from './support/run-action.js';

/**
 * The message mode end to end: the committed bundle runs as a provider workflow's step (a real
 * simulated run's OIDC environment) against the real service, the run completes, and the consumer's
 * `repository_dispatch` carries the message.
 */
let h: Harness;
let world: World;
const relays: Relay[] = [];

beforeEach(async () => {
  h = await startHarness({ transport: 'inject' });
  world = await setUpWorld(h);
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
  await h.close();
});

async function relay(options: Parameters<typeof startRelay>[0] = {}): Promise<Relay> {
  const started = await startRelay({ target: h.url, ...options });
  relays.push(started);
  return started;
}

/** Every masked value appears nowhere but in its own `::add-mask::` command. */
function expectSecretsNotLogged(step: ActionStepResult): void {
  for (const secret of step.masked) {
    expect(step.stdout.split(secret).length - 1).toBe(1);
    expect(step.stderr).not.toContain(secret);
    expect(step.summary).not.toContain(secret);
  }
}

describe('message mode', () => {
  it('sends the message with the run’s OIDC token; the completed run delivers it to the consumer', async () => {
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: {
        'zekt-api-url': h.url,
        'event-type': 'acme-deployed',
        payload: JSON.stringify({ version: '1.2.3', notes: ['fast', 'safe'] }),
      },
      env: run.env,
    });

    expect(step.errors).toEqual([]);
    expect(step.exitCode).toBe(0);
    expect(step.outputs).toEqual({
      'event-id': expect.stringMatching(/^msg_/),
      status: 'accepted',
      'consumers-notified': '1',
    });
    expect(step.summary).toContain('Zekt message sent');
    expect(step.summary).toContain(step.outputs['event-id']);
    // getIDToken masked the token; it is printed nowhere else.
    expect(step.masked).toHaveLength(1);
    expectSecretsNotLogged(step);

    // Nothing is dispatched before the run completes; then the dispatch carries the message.
    expect(h.sim.dispatches({ repository: 'globex/app' })).toEqual([]);
    await run.complete();
    const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
    expect(dispatch.eventType).toBe('acme-deployed');
    const zekt = (dispatch.clientPayload as { zekt: Record<string, unknown> }).zekt;
    expect(zekt.payload).toEqual({ version: '1.2.3', notes: ['fast', 'safe'] });
    expect(zekt.correlationId).toBe(String(run.runId));
  });

  it('sends the message body and headers of docs/action.md, values from the GITHUB_* variables', async () => {
    const recorder = await relay();
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: {
        'zekt-api-url': recorder.url,
        'event-type': 'acme-deployed',
        payload: '[1, "two", {"three": 3}]',
      },
      env: run.env,
    });
    expect(step.exitCode).toBe(0);

    expect(recorder.requests).toHaveLength(1);
    const [request] = recorder.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/api/events/receive');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-github-repository']).toBe('acme/api');
    expect(request!.headers.authorization).toBe(`Bearer ${step.masked[0]}`);
    const body = JSON.parse(request!.body);
    expect(body).toEqual({
      eventType: 'acme-deployed',
      payload: [1, 'two', { three: 3 }],
      repository: run.env.GITHUB_REPOSITORY,
      workflowRunId: run.env.GITHUB_RUN_ID,
      workflow: run.env.GITHUB_WORKFLOW,
      triggeredBy: run.env.GITHUB_ACTOR,
      commitSha: run.env.GITHUB_SHA,
      ref: run.env.GITHUB_REF,
      timestamp: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
  });

  it('sends a message of 400 KB from payload-file (inputs over 128 KB cannot reach a process)', async () => {
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const file = join(mkdtempSync(join(tmpdir(), 'zekt-message-')), 'message.json');
    writeFileSync(file, JSON.stringify({ blob: 'x'.repeat(400 * 1024) }));
    const step = await runActionStep({
      inputs: { 'zekt-api-url': h.url, 'event-type': 'acme-deployed', 'payload-file': file },
      env: run.env,
    });
    expect(step.errors).toEqual([]);
    expect(step.outputs.status).toBe('accepted');
  });
});

describe('answers that are not retried', () => {
  async function refusedOnce(step: ActionStepResult, recorder: Relay, status: number, code: string) {
    expect(step.exitCode).toBe(1);
    expect(recorder.requests).toHaveLength(1);
    expect(recorder.requests[0]!.response.status).toBe(status);
    const problem = JSON.parse(recorder.requests[0]!.response.body);
    expect(problem.code).toBe(code);
    expect(step.errors).toEqual([expect.stringContaining(problem.detail)]);
    expect(step.errors[0]).toContain(`(${status})`);
    expect(step.warnings).toEqual([]);
    expect(step.outputs.status).toBe('failed');
    expect(step.summary).toContain('Zekt message failed');
  }

  it('401: a token for another audience; the service’s detail is the failure', async () => {
    const recorder = await relay();
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: { 'zekt-api-url': recorder.url, 'event-type': 'acme-deployed', audience: 'api://not-zekt' },
      env: run.env,
    });
    await refusedOnce(step, recorder, 401, 'invalid_token');
  });

  it('403: the step claims another repository than its token', async () => {
    const recorder = await relay();
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: { 'zekt-api-url': recorder.url, 'event-type': 'acme-deployed' },
      env: { ...run.env, GITHUB_REPOSITORY: 'acme/web' },
    });
    await refusedOnce(step, recorder, 403, 'repository_mismatch');
  });

  it('404: the repository is not a provider', async () => {
    const recorder = await relay();
    const env = await startUnregisteredRun(h, 'acme/web');
    const step = await runActionStep({
      inputs: { 'zekt-api-url': recorder.url, 'event-type': 'acme-deployed' },
      env,
    });
    await refusedOnce(step, recorder, 404, 'repository_not_enabled');
  });
});

describe('transient failures are retried', () => {
  const fast = { 'retry-base-delay-ms': '1' };

  it('503, 503, then the service: the third attempt delivers', async () => {
    const problem = {
      type: 'x',
      title: 'Service Unavailable',
      status: 503,
      detail: 'the store is busy',
      code: 'x',
    };
    const recorder = await relay({
      faults: [
        { kind: 'status', status: 503, body: problem },
        { kind: 'status', status: 502 },
      ],
    });
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: { 'zekt-api-url': recorder.url, 'event-type': 'acme-deployed', ...fast },
      env: run.env,
    });
    expect(step.errors).toEqual([]);
    expect(step.outputs.status).toBe('accepted');
    expect(recorder.requests.map((r) => r.response.status)).toEqual([503, 502, 201]);
    expect(step.warnings).toEqual([
      expect.stringMatching(/answered 503: x: the store is busy \(attempt 1 of 4\); retrying in \d+ ms/),
      expect.stringMatching(/answered 502 \(attempt 2 of 4\); retrying/),
    ]);
    // The same message each time.
    expect(new Set(recorder.requests.map((r) => r.body)).size).toBe(1);
  });

  it('429 with Retry-After: 0, then the service', async () => {
    const recorder = await relay({
      faults: [{ kind: 'status', status: 429, headers: { 'retry-after': '0' } }],
    });
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: { 'zekt-api-url': recorder.url, 'event-type': 'acme-deployed', ...fast },
      env: run.env,
    });
    expect(step.outputs.status).toBe('accepted');
    expect(recorder.requests.map((r) => r.response.status)).toEqual([429, 201]);
  });

  it('connections reset twice, then the service', async () => {
    const recorder = await relay({ faults: [{ kind: 'reset' }, { kind: 'reset' }] });
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: { 'zekt-api-url': recorder.url, 'event-type': 'acme-deployed', ...fast },
      env: run.env,
    });
    expect(step.errors).toEqual([]);
    expect(step.outputs.status).toBe('accepted');
    expect(recorder.requests).toHaveLength(3);
    expect(step.warnings).toHaveLength(2);
    expect(step.warnings[0]).toMatch(/ECONNRESET|socket hang up/);
  });

  it('a service that keeps failing: four attempts, then the last answer is the failure', async () => {
    const problem = {
      type: 'x',
      title: 'Service Unavailable',
      status: 503,
      detail: 'store unavailable',
      code: 'x',
    };
    const recorder = await relay({ repeatFault: { kind: 'status', status: 503, body: problem } });
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: { 'zekt-api-url': recorder.url, 'event-type': 'acme-deployed', ...fast },
      env: run.env,
    });
    expect(step.exitCode).toBe(1);
    expect(recorder.requests).toHaveLength(4);
    expect(step.warnings).toHaveLength(3);
    expect(step.errors).toEqual([
      expect.stringContaining('answered 503: x: store unavailable (attempt 4 of 4, giving up)'),
    ]);
  });

  it('an unreachable service: retried, then a failure that names the address and what to check', async () => {
    // A port that was listening a moment ago and is closed now: connection refused.
    const gone = await startRelay();
    const url = gone.url;
    await gone.close();
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: { 'zekt-api-url': url, 'event-type': 'acme-deployed', ...fast },
      env: run.env,
    });
    expect(step.exitCode).toBe(1);
    expect(step.warnings).toHaveLength(3);
    expect(step.errors).toHaveLength(1);
    expect(step.errors[0]).toContain(`POST ${url}/api/events/receive failed`);
    expect(step.errors[0]).toContain('ECONNREFUSED');
    expect(step.errors[0]).toContain('check zekt-api-url and that the Zekt service is up');
    expect(step.outputs.status).toBe('failed');
  });
});
