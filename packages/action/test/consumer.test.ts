import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConsumerRunRecord } from 'zekt-github-sim';
import { makeDurable, setUpWorld, type World } from '../../../apps/server/test/support/demo-world.js';
import { eventually, type Harness, startHarness } from '../../../apps/server/test/support/harness.js';
import { startProviderRun } from './support/provider-run.js';
import { type Relay, startRelay } from './support/relay.js';
import { type ActionPath, runActionStep } from './support/run-action.js';

/**
 * The consumer modes end to end: a provider run sends its message with the action, the run
 * completes, Zekt dispatches a durable delivery to globex/app, the simulator starts globex/app's
 * workflow, and the bundle runs as that workflow's steps — the run's OIDC environment, and its
 * `repository_dispatch` event in the file `GITHUB_EVENT_PATH` names.
 */
let h: Harness;
let world: World;

beforeEach(async () => {
  h = await startHarness({ transport: 'inject' });
  world = await setUpWorld(h);
  await makeDurable(h, world);
});

afterEach(async () => {
  await h.close();
});

/**
 * A consumer workflow whose run name does not carry the delivery id: completion tracking cannot
 * tell which delivery its runs are about, so only the action's calls move the record.
 */
const UNTRACKED = 'Deploy';
// biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
const TRACKED = 'zekt ${{ github.event.client_payload.zekt.deliveryId }}';

/** Sends a message through the action from a provider run, completes the run, returns the consumer's run. */
async function deliver(
  message: { payload: string } | { file: string },
  runName = UNTRACKED,
): Promise<ConsumerRunRecord> {
  h.sim.defineConsumerWorkflow({
    repository: 'globex/app',
    workflow: 'on-deploy.yml',
    types: ['acme-deployed'],
    runName,
  });
  const run = await startProviderRun(h, { providerToken: world.providerToken });
  const sent = await runActionStep({
    inputs: {
      'zekt-api-url': h.url,
      'event-type': 'acme-deployed',
      ...('file' in message ? { 'payload-file': message.file } : { payload: message.payload }),
    },
    env: run.env,
  });
  expect(sent.errors).toEqual([]);
  await run.complete();
  return eventually(() => h.sim.consumerRuns({ repository: 'globex/app' })[0]);
}

async function consumerStep(
  action: ActionPath,
  record: ConsumerRunRecord,
  options: { inputs?: Record<string, string>; env?: Record<string, string>; zektUrl?: string } = {},
) {
  return runActionStep({
    action,
    inputs: { 'zekt-api-url': options.zektUrl ?? h.url, ...options.inputs },
    env: options.env ?? record.env,
    event: record.event,
  });
}

async function deliveryRecord(deliveryId: string) {
  const answer = await h.call('GET', `/api/v1/deliveries/${deliveryId}`, { token: world.consumerToken });
  expect(answer.status).toBe(200);
  return answer.body;
}

function withoutOidc(env: Record<string, string>): Record<string, string> {
  const { ACTIONS_ID_TOKEN_REQUEST_URL: _url, ACTIONS_ID_TOKEN_REQUEST_TOKEN: _token, ...rest } = env;
  return rest;
}

describe('confirm and complete', () => {
  it('confirm, then complete, with the consumer run’s OIDC token: Dispatched → Confirmed → Completed', async () => {
    const record = await deliver({ payload: '{"version":"1.2.3"}' });
    expect(record.event).toMatchObject({ action: 'acme-deployed' });
    const deliveryId = record.deliveryId!;
    expect((await deliveryRecord(deliveryId)).deliveryStatus).toBe('Dispatched');

    const confirmed = await consumerStep('confirm', record);
    expect(confirmed.errors).toEqual([]);
    expect(confirmed.exitCode).toBe(0);
    expect(confirmed.outputs).toEqual({ 'delivery-id': deliveryId, status: 'Confirmed' });
    expect(confirmed.summary).toContain('Zekt delivery confirmed');
    expect((await deliveryRecord(deliveryId)).deliveryStatus).toBe('Confirmed');

    const completed = await consumerStep('complete', record, { inputs: { success: 'true' } });
    expect(completed.errors).toEqual([]);
    expect(completed.outputs).toEqual({ 'delivery-id': deliveryId, status: 'Completed' });
    const final = await deliveryRecord(deliveryId);
    expect(final).toMatchObject({ deliveryStatus: 'Completed', isFinalized: true });
    expect(final.confirmedAt).not.toBeNull();

    // The OIDC token and the delivery token were masked, and printed nowhere else.
    expect(completed.masked).toEqual(
      expect.arrayContaining([(record.event as unknown as JsonEvent).client_payload.zekt.token]),
    );
    for (const secret of completed.masked) expect(completed.stdout.split(secret).length - 1).toBe(1);
  });

  it('complete with success: false fails the delivery', async () => {
    const record = await deliver({ payload: '{}' });
    const completed = await consumerStep('complete', record, { inputs: { success: 'false' } });
    expect(completed.outputs.status).toBe('Failed');
    expect(await deliveryRecord(record.deliveryId!)).toMatchObject({
      deliveryStatus: 'Failed',
      consumerWorkflowConclusion: 'failure',
    });
  });

  it('a delivery already final (409 already_final) is not the step’s failure: confirm and complete succeed', async () => {
    const record = await deliver({ payload: '{}' });
    expect((await consumerStep('complete', record)).outputs.status).toBe('Completed');

    const again = await consumerStep('complete', record, { inputs: { success: 'false' } });
    expect(again.exitCode).toBe(0);
    expect(again.errors).toEqual([]);
    expect(again.outputs.status).toBe('Completed');
    expect(again.stdout).toContain(`${record.deliveryId} is already Completed; nothing to complete`);
    const late = await consumerStep('confirm', record);
    expect(late.exitCode).toBe(0);
    expect(late.outputs.status).toBe('Completed');
    expect((await deliveryRecord(record.deliveryId!)).deliveryStatus).toBe('Completed');
  });

  it('with the recommended run-name, completion tracking may finish first; the last step still succeeds', async () => {
    const record = await deliver({ payload: '{}' }, TRACKED);
    expect(record.displayTitle).toBe(`zekt ${record.deliveryId}`);
    await eventually(async () =>
      (await deliveryRecord(record.deliveryId!)).deliveryStatus === 'Completed' ? true : undefined,
    );
    const completed = await consumerStep('complete', record);
    expect(completed.exitCode).toBe(0);
    expect(completed.outputs.status).toBe('Completed');
  });

  it('auth: delivery-token uses client_payload.zekt.token, with no OIDC environment at all', async () => {
    const record = await deliver({ payload: '{}' });
    const env = withoutOidc(record.env);
    const confirmed = await consumerStep('confirm', record, { inputs: { auth: 'delivery-token' }, env });
    expect(confirmed.errors).toEqual([]);
    expect(confirmed.warnings).toEqual([]);
    expect(confirmed.outputs.status).toBe('Confirmed');
    expect(confirmed.stdout).toContain("Authenticating as the delivery's token");
  });

  it('without id-token: write, the default auth falls back to the delivery token, with a warning', async () => {
    const record = await deliver({ payload: '{}' });
    const completed = await consumerStep('complete', record, { env: withoutOidc(record.env) });
    expect(completed.exitCode).toBe(0);
    expect(completed.outputs.status).toBe('Completed');
    expect(completed.warnings).toEqual([
      expect.stringContaining(
        "could not get the job's OIDC token (Unable to get ACTIONS_ID_TOKEN_REQUEST_URL env variable); using the delivery's token",
      ),
    ]);
  });

  it('an OIDC token of another repository: 404, not retried, the service’s detail in the failure', async () => {
    const record = await deliver({ payload: '{}' });
    const otherRepository = await startProviderRun(h, { providerToken: world.providerToken });
    const recorder = await startRelay({ target: h.url });
    try {
      const confirmed = await consumerStep('confirm', record, {
        env: otherRepository.env,
        zektUrl: recorder.url,
      });
      expect(confirmed.exitCode).toBe(1);
      expect(recorder.requests).toHaveLength(1);
      const problem = JSON.parse(recorder.requests[0]!.response.body);
      expect(problem.code).toBe('delivery_not_found');
      expect(confirmed.errors).toEqual([
        `Zekt refused confirm of ${record.deliveryId} (404): delivery_not_found: ${problem.detail}`,
      ]);
      expect(confirmed.outputs.status).toBe('failed');
    } finally {
      await recorder.close();
    }
  });
});

describe('a workflow_dispatch delivery', () => {
  it('is read from the zekt input: confirm, fetch-payload and complete work as for repository_dispatch', async () => {
    // Queued and never picked up: nothing but the steps below moves the record.
    h.sim.defineConsumerWorkflow({
      repository: 'globex/app',
      workflow: 'on-zekt.yml',
      on: { workflow_dispatch: { inputs: { zekt: { required: true, type: 'string' } } } },
      neverStart: true,
    });
    const switched = await h.call('PATCH', `/api/v1/subscriptions/${world.subscriptionId}`, {
      token: world.consumerToken,
      body: { deliveryMode: 'workflow_dispatch', workflow: 'on-zekt.yml' },
    });
    expect(switched.status).toBe(200);
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const sent = await runActionStep({
      inputs: { 'zekt-api-url': h.url, 'event-type': 'acme-deployed', payload: '{"version":"2.0.0"}' },
      env: run.env,
    });
    expect(sent.errors).toEqual([]);
    await run.complete();
    const record = await eventually(() => h.sim.consumerRuns({ repository: 'globex/app' })[0]);
    expect(record.trigger).toBe('workflow_dispatch');
    expect(record.event).toMatchObject({ inputs: { zekt: expect.any(String) } });
    expect('client_payload' in record.event).toBe(false);
    const deliveryId = record.deliveryId!;

    const confirmed = await consumerStep('confirm', record);
    expect(confirmed.errors).toEqual([]);
    expect(confirmed.outputs).toEqual({ 'delivery-id': deliveryId, status: 'Confirmed' });
    const fetched = await consumerStep('fetch-payload', record);
    expect(fetched.outputs.status).toBe('inline');
    expect(JSON.parse(fetched.outputs.payload!)).toEqual({ version: '2.0.0' });
    const completed = await consumerStep('complete', record, { env: withoutOidc(record.env) });
    expect(completed.outputs).toEqual({ 'delivery-id': deliveryId, status: 'Completed' });
    // The delivery token came from the input too, and was masked.
    const token = JSON.parse((record.event as { inputs: { zekt: string } }).inputs.zekt).token;
    expect(completed.masked).toContain(token);
    expect(await deliveryRecord(deliveryId)).toMatchObject({
      deliveryStatus: 'Completed',
      consumerRun: { id: record.id },
    });
  });
});

interface JsonEvent {
  client_payload: { zekt: { token: string; payload?: unknown; payloadRef?: { url: string; bytes: number } } };
}

describe('fetch-payload', () => {
  it('fetches a 400 KB message sent by reference, writes the output and the file', async () => {
    const message = { version: '1.2.3', blob: 'é'.repeat(200 * 1024) };
    const file = join(mkdtempSync(join(tmpdir(), 'zekt-message-')), 'message.json');
    writeFileSync(file, JSON.stringify(message));
    const record = await deliver({ file });
    const zekt = (record.event as unknown as JsonEvent).client_payload.zekt;
    expect(zekt.payload).toBeUndefined();
    expect(zekt.payloadRef).toEqual({
      url: `${h.url}/api/deliveries/${record.deliveryId}/payload`,
      bytes: Buffer.byteLength(JSON.stringify(message)),
    });

    const fetched = await consumerStep('fetch-payload', record);
    expect(fetched.errors).toEqual([]);
    expect(fetched.outputs.status).toBe('fetched');
    expect(fetched.outputs['delivery-id']).toBe(record.deliveryId);
    expect(JSON.parse(fetched.outputs.payload!)).toEqual(message);
    const path = join(fetched.runnerTemp, 'zekt-payload.json');
    expect(fetched.outputs['payload-path']).toBe(path);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(message);
    expect(fetched.summary).toContain('Zekt message received');

    // The delivery's token works as well, into a file the step names.
    const target = join(fetched.runnerTemp, 'in', 'message.json');
    const withToken = await consumerStep('fetch-payload', record, {
      inputs: { auth: 'delivery-token', path: target },
      env: withoutOidc(record.env),
    });
    expect(withToken.outputs['payload-path']).toBe(target);
    expect(JSON.parse(readFileSync(target, 'utf8'))).toEqual(message);
  });

  it('outputs an inline message without calling Zekt', async () => {
    const record = await deliver({ payload: '{"version":"1.2.3"}' });
    const recorder: Relay = await startRelay();
    try {
      const fetched = await consumerStep('fetch-payload', record, { zektUrl: recorder.url });
      expect(fetched.errors).toEqual([]);
      expect(fetched.outputs.status).toBe('inline');
      expect(JSON.parse(fetched.outputs.payload!)).toEqual({ version: '1.2.3' });
      expect(recorder.requests).toEqual([]);
    } finally {
      await recorder.close();
    }
  });
});
