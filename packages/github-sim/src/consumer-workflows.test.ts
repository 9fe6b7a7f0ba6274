import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App } from '@octokit/app';
import { Octokit } from '@octokit/core';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { api, installationToken as createInstallationToken } from '../test/support/github-client.js';
import { type ReceivedRequest, type Receiver, startReceiver } from '../test/support/http-receiver.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import { waitUntil } from '../test/support/wait-until.js';
import type { GitHubSimulator } from './index.js';

const HOOK_SECRET = 'consumer-hook-secret';
const DELIVERY_ID = 'delivery-0b6d2a52-54a4-4a5c-9d7e-6c1f3f6f7e10';
const DELIVERY_TOKEN = `zdt_${'a'.repeat(43)}`;

/** One call the fake Zekt received, with what it made of the credentials. */
interface ZektCall {
  method: string;
  path: string;
  body: unknown;
  /** `oidc:<repository claim>`, `delivery-token`, or why the credentials were refused. */
  caller: string;
  claims?: Record<string, unknown>;
}

/**
 * A loopback stand-in for Zekt's consumer API: accepts OIDC tokens that verify against the
 * simulator's issuer (audience `api://zekt`) and the one known delivery token; answers 401 otherwise.
 */
async function startFakeZekt(sim: GitHubSimulator) {
  const calls: ZektCall[] = [];
  const jwks = createRemoteJWKSet(new URL(`${sim.oidcIssuer}/.well-known/jwks`));
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      const call: ZektCall = {
        method: req.method ?? '',
        path: req.url ?? '',
        body: text === '' ? null : JSON.parse(text),
        caller: 'none',
      };
      if (token === DELIVERY_TOKEN) call.caller = 'delivery-token';
      else if (token !== '') {
        try {
          const { payload } = await jwtVerify(token, jwks, {
            issuer: sim.oidcIssuer,
            audience: 'api://zekt',
            algorithms: ['RS256'],
          });
          call.caller = `oidc:${String(payload.repository)}`;
          call.claims = payload as Record<string, unknown>;
        } catch (error) {
          call.caller = `rejected: ${(error as Error).message}`;
        }
      }
      calls.push(call);
      const ok = call.caller === 'delivery-token' || call.caller === 'oidc:acme/consumer';
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      if (!ok) res.end(JSON.stringify({ error: 'invalid_token' }));
      else if (call.path.endsWith('/payload'))
        res.end(JSON.stringify({ version: '9.9.9', big: 'x'.repeat(1000) }));
      else res.end(JSON.stringify({ deliveryId: DELIVERY_ID, path: call.path }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let sim: GitHubSimulator;
let zekt: Awaited<ReturnType<typeof startFakeZekt>>;
let hooks: Receiver;
let octokit: Octokit;
let installationToken: string;
beforeAll(async () => {
  hooks = await startReceiver();
  sim = await createTestSimulator({ allowPrivateHookUrls: true });
  zekt = await startFakeZekt(sim);
  const { installation } = await sim.createInstallation({
    account: { login: 'acme', type: 'Organization' },
    repositories: ['provider', 'consumer', 'quiet'],
  });
  const app = new App({
    appId: sim.app.id,
    privateKey: sim.app.privateKeyPem,
    Octokit: Octokit.defaults({ baseUrl: sim.apiUrl }),
  });
  octokit = await app.getInstallationOctokit(installation.id);
  installationToken = await createInstallationToken(sim, installation.id);
  // The consumer repository's completion-tracking hook.
  await octokit.request('POST /repos/{owner}/{repo}/hooks', {
    owner: 'acme',
    repo: 'consumer',
    config: { url: `${hooks.url}/consumer-hook`, content_type: 'json', secret: HOOK_SECRET },
    events: ['workflow_run'],
  });
});
afterAll(async () => {
  await sim.close();
  await zekt.close();
  await hooks.close();
});

const definitions: string[] = [];
beforeEach(() => {
  zekt.calls.length = 0;
});
afterEach(() => {
  for (const id of definitions.splice(0)) sim.removeConsumerWorkflow(id);
});

function define(input: Parameters<GitHubSimulator['defineConsumerWorkflow']>[0]) {
  const { id } = sim.defineConsumerWorkflow(input);
  definitions.push(id);
  return id;
}

function dispatch(repo: string, eventType: string, clientPayload: Record<string, unknown>) {
  return octokit.request('POST /repos/{owner}/{repo}/dispatches', {
    owner: 'acme',
    repo,
    event_type: eventType,
    client_payload: clientPayload,
  });
}

function zektPayload(extra: Record<string, unknown> = {}) {
  return {
    zekt: {
      version: 1,
      correlationId: '9000000001',
      deliveryId: DELIVERY_ID,
      durable: true,
      token: DELIVERY_TOKEN,
      ...extra,
    },
  };
}

function waitForCompletedRun(dispatchId: number) {
  return waitUntil(
    () => sim.consumerRuns().find((run) => run.dispatchId === dispatchId && run.status === 'completed'),
    `the consumer run of dispatch ${dispatchId} to complete`,
  );
}

function lastDispatchId(): number {
  return sim.dispatches().at(-1)?.id ?? -1;
}

function signatureOf(request: ReceivedRequest): string {
  return `sha256=${createHmac('sha256', HOOK_SECRET).update(request.rawBody).digest('hex')}`;
}

describe('consumer workflows (repository_dispatch starts a run)', () => {
  it('runs the matching workflow: run-name, signed workflow_run webhooks in order, OIDC confirm then complete', async () => {
    define({
      repository: 'acme/consumer',
      workflow: 'on-deploy.yml',
      name: 'On deploy',
      types: ['zekt-delivery'],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a JS template
      runName: 'zekt ${{ github.event.client_payload.zekt.deliveryId }} (${{ github.event.action }})',
      zekt: { url: `${zekt.url}/`, confirm: true, complete: true },
    });
    const response = await dispatch('consumer', 'zekt-delivery', zektPayload());
    expect(response.status).toBe(204);
    const dispatchId = lastDispatchId();

    // The run exists as soon as the dispatch was accepted, queued.
    const [queued] = sim.consumerRuns({ repository: 'ACME/consumer' });
    expect(queued).toMatchObject({ dispatchId, status: 'queued', conclusion: null, startedAt: null });

    const run = await waitForCompletedRun(dispatchId);
    const displayTitle = `zekt ${DELIVERY_ID} (zekt-delivery)`;
    expect(run).toMatchObject({
      repository: 'acme/consumer',
      workflow: 'on-deploy.yml',
      eventType: 'zekt-delivery',
      displayTitle,
      status: 'completed',
      conclusion: 'success',
      deliveryId: DELIVERY_ID,
      correlationId: '9000000001',
      startedAt: expect.stringMatching(/Z$/),
      completedAt: expect.stringMatching(/Z$/),
      calls: [
        {
          step: 'confirm',
          status: 200,
          body: { deliveryId: DELIVERY_ID, path: '/api/event-delivery/confirm' },
        },
        {
          step: 'complete',
          status: 200,
          body: { deliveryId: DELIVERY_ID, path: '/api/event-delivery/complete' },
        },
      ],
    });

    // Zekt saw confirm, then complete, each with an OIDC token of this consumer run.
    expect(zekt.calls.map((call) => [call.method, call.path, call.caller])).toEqual([
      ['POST', '/api/event-delivery/confirm', 'oidc:acme/consumer'],
      ['POST', '/api/event-delivery/complete', 'oidc:acme/consumer'],
    ]);
    expect(zekt.calls.map((call) => call.body)).toEqual([
      { correlationId: '9000000001', deliveryId: DELIVERY_ID },
      { correlationId: '9000000001', deliveryId: DELIVERY_ID, success: true },
    ]);
    expect(zekt.calls[0]?.claims).toMatchObject({
      repository: 'acme/consumer',
      run_id: String(run.id),
      run_attempt: '1',
      event_name: 'repository_dispatch',
      workflow: 'On deploy',
      actor: `${sim.app.slug}[bot]`,
    });

    // The hook got requested → in_progress → completed, signed, carrying the display title.
    const received = hooks.requests.filter(
      (request) =>
        request.headers['x-github-event'] === 'workflow_run' &&
        (request.json as { workflow_run: { id: number } }).workflow_run.id === run.id,
    );
    expect(received.map((request) => (request.json as { action: string }).action)).toEqual([
      'requested',
      'in_progress',
      'completed',
    ]);
    for (const request of received) {
      expect(request.headers['x-hub-signature-256']).toBe(signatureOf(request));
      expect(request.json).toMatchObject({
        workflow_run: {
          event: 'repository_dispatch',
          display_title: displayTitle,
          run_attempt: 1,
          name: 'On deploy',
          path: '.github/workflows/on-deploy.yml',
        },
        repository: { full_name: 'acme/consumer' },
        sender: { login: `${sim.app.slug}[bot]`, type: 'Bot' },
      });
    }
    expect(received[2]?.json).toMatchObject({ workflow_run: { status: 'completed', conclusion: 'success' } });
    expect(run.webhooks.map((delivery) => delivery.action)).toEqual([
      'requested',
      'in_progress',
      'completed',
    ]);

    // The run is GitHub's too: GET /actions/runs/{id} serves it.
    const fetched = await octokit.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}', {
      owner: 'acme',
      repo: 'consumer',
      run_id: run.id,
    });
    expect(fetched.data).toMatchObject({
      display_title: displayTitle,
      status: 'completed',
      event: 'repository_dispatch',
    });

    // Its step environment still works, so a real action step can run as this run later.
    expect(run.env).toMatchObject({
      GITHUB_REPOSITORY: 'acme/consumer',
      GITHUB_RUN_ID: String(run.id),
      GITHUB_EVENT_NAME: 'repository_dispatch',
      GITHUB_WORKFLOW: 'On deploy',
    });
    const idToken = await fetch(`${run.env.ACTIONS_ID_TOKEN_REQUEST_URL}&audience=api://zekt`, {
      headers: { authorization: `Bearer ${run.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN}` },
    });
    expect(idToken.status).toBe(200);
    expect(run.event).toMatchObject({
      action: 'zekt-delivery',
      branch: 'main',
      client_payload: zektPayload(),
      repository: { full_name: 'acme/consumer' },
    });
  });

  it('starts nothing for a non-matching event type, another repository, or a workflow that never starts', async () => {
    define({ repository: 'acme/consumer', workflow: 'on-deploy.yml', types: ['zekt-delivery'] });
    define({ repository: 'acme/quiet', workflow: 'stuck.yml', neverStart: true });
    const before = sim.consumerRuns().length;
    const hookRequests = hooks.requests.length;

    await dispatch('consumer', 'something-else', zektPayload());
    await dispatch('provider', 'zekt-delivery', zektPayload());
    await dispatch('quiet', 'zekt-delivery', zektPayload());

    // Runs are created when the dispatch is accepted, so their absence is final once the 204s arrived.
    expect(sim.consumerRuns()).toHaveLength(before);
    expect(
      sim
        .dispatches()
        .slice(-3)
        .map((record) => record.repository),
    ).toEqual(['acme/consumer', 'acme/provider', 'acme/quiet']);
    // A matching dispatch afterwards is the only one that runs (and its webhooks the only new ones).
    await dispatch('consumer', 'zekt-delivery', zektPayload());
    const run = await waitForCompletedRun(lastDispatchId());
    expect(sim.consumerRuns()).toHaveLength(before + 1);
    expect(
      hooks.requests
        .slice(hookRequests)
        .map((request) => (request.json as { workflow_run: { id: number } }).workflow_run.id),
    ).toEqual([run.id, run.id, run.id]);
    expect(zekt.calls).toEqual([]);
  });

  it('reports failure with success: false, authenticated with the delivery token', async () => {
    define({
      repository: 'acme/consumer',
      workflow: 'on-failure.yml',
      conclusion: 'failure',
      startDelayMs: 20,
      durationMs: 20,
      zekt: { url: zekt.url, confirm: true, complete: true, auth: 'delivery-token' },
    });
    await dispatch('consumer', 'zekt-delivery', zektPayload());
    const run = await waitForCompletedRun(lastDispatchId());
    expect(run.conclusion).toBe('failure');
    // No run-name: the display title is the workflow name (from the file name, as GitHub does).
    expect(run.displayTitle).toBe('On-failure');
    expect(zekt.calls.map((call) => [call.path, call.caller, call.body])).toEqual([
      [
        '/api/event-delivery/confirm',
        'delivery-token',
        { correlationId: '9000000001', deliveryId: DELIVERY_ID },
      ],
      [
        '/api/event-delivery/complete',
        'delivery-token',
        { correlationId: '9000000001', deliveryId: DELIVERY_ID, success: false },
      ],
    ]);
    const completed = run.webhooks.at(-1)?.payload as { workflow_run: { conclusion: string } };
    expect(completed.workflow_run.conclusion).toBe('failure');
  });

  it('records a call that could not authenticate (no delivery token in the payload)', async () => {
    define({
      repository: 'acme/consumer',
      workflow: 'on-deploy.yml',
      zekt: { url: zekt.url, confirm: true, auth: 'delivery-token' },
    });
    await dispatch('consumer', 'zekt-delivery', { zekt: { correlationId: 42 } });
    const run = await waitForCompletedRun(lastDispatchId());
    expect(run).toMatchObject({
      deliveryId: null,
      correlationId: 42,
      calls: [{ step: 'confirm', status: 0, body: null, error: 'client_payload.zekt.token is missing' }],
    });
    expect(zekt.calls).toEqual([]);
  });

  it('fetches payloadRef with the same auth and keeps the body', async () => {
    define({
      repository: 'acme/consumer',
      workflow: 'on-deploy.yml',
      zekt: { url: zekt.url, fetchPayload: true },
    });
    const payloadUrl = `${zekt.url}/api/deliveries/${DELIVERY_ID}/payload`;
    await dispatch(
      'consumer',
      'zekt-delivery',
      zektPayload({ payloadRef: { url: payloadUrl, bytes: 400000 } }),
    );
    const run = await waitForCompletedRun(lastDispatchId());
    expect(run.calls).toEqual([
      { step: 'fetch-payload', status: 200, body: { version: '9.9.9', big: 'x'.repeat(1000) } },
    ]);
    expect(run.fetchedPayload).toEqual({ version: '9.9.9', big: 'x'.repeat(1000) });
    expect(zekt.calls.map((call) => [call.method, call.path, call.caller])).toEqual([
      ['GET', `/api/deliveries/${DELIVERY_ID}/payload`, 'oidc:acme/consumer'],
    ]);
  });

  it('refuses malformed definitions and unknown ids', () => {
    expect(() => sim.defineConsumerWorkflow({ repository: 'acme/nope', workflow: 'x.yml' })).toThrow(
      /not a repository of an installation/,
    );
    expect(() => sim.defineConsumerWorkflow({ repository: 'acme/consumer', workflow: '../x' })).toThrow(
      /workflow file name/,
    );
    expect(() =>
      sim.defineConsumerWorkflow({
        repository: 'acme/consumer',
        workflow: 'x.yml',
        zekt: { url: 'ftp://x' },
      }),
    ).toThrow(/zekt.url/);
    expect(() =>
      sim.defineConsumerWorkflow({ repository: 'acme/consumer', workflow: 'x.yml', startDelayMs: -5 }),
    ).toThrow(/startDelayMs/);
    expect(() => sim.removeConsumerWorkflow('consumer-workflow-0')).toThrow(/no consumer workflow/);
  });

  it('is driven over the control API too', async () => {
    const control = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${sim.url}/_sim${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
    };
    const created = await control('POST', '/consumer-workflows', {
      repository: 'acme/consumer',
      workflow: 'over-http.yml',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a JS template
      runName: 'run ${{ github.run_id }} of ${{ github.repository }} ${{ github.nope }}',
    });
    expect(created.status).toBe(201);
    const { id } = created.body as { id: string };
    expect((await control('POST', '/consumer-workflows', { repository: 'acme/consumer' })).status).toBe(400);

    // Dispatched with a raw installation token, as any client would.
    const answer = await api(sim, 'POST', '/repos/acme/consumer/dispatches', {
      authorization: `token ${installationToken}`,
      body: { event_type: 'anything' },
    });
    expect(answer.status).toBe(204);
    const run = await waitForCompletedRun(lastDispatchId());
    expect(run.displayTitle).toBe(`run ${run.id} of acme/consumer `);
    expect(run.correlationId).toBeNull();

    const listed = await control('GET', '/consumer-runs?repository=acme/consumer');
    expect((listed.body as Array<{ id: number }>).map((entry) => entry.id)).toContain(run.id);
    expect((await control('GET', '/consumer-runs?repository=acme/provider')).body).toEqual([]);
    expect((await control('DELETE', `/consumer-workflows/${id}`)).status).toBe(204);
    expect((await control('DELETE', `/consumer-workflows/${id}`)).status).toBe(400);
  });
});

describe('closing with consumer runs pending', () => {
  it('aborts runs that are waiting and closes cleanly', async () => {
    const receiver = await startReceiver();
    const local = await createTestSimulator({ allowPrivateHookUrls: true });
    try {
      await local.createInstallation({ account: { login: 'acme' }, repositories: ['consumer'] });
      local.defineConsumerWorkflow({
        repository: 'acme/consumer',
        workflow: 'slow.yml',
        startDelayMs: 600_000,
      });
      const app = new App({
        appId: local.app.id,
        privateKey: local.app.privateKeyPem,
        Octokit: Octokit.defaults({ baseUrl: local.apiUrl }),
      });
      const [installation] = (await app.octokit.request('GET /app/installations')).data;
      const client = await app.getInstallationOctokit(installation?.id ?? 0);
      await client.request('POST /repos/{owner}/{repo}/hooks', {
        owner: 'acme',
        repo: 'consumer',
        config: { url: `${receiver.url}/hook`, content_type: 'json' },
        events: ['workflow_run'],
      });
      await client.request('POST /repos/{owner}/{repo}/dispatches', {
        owner: 'acme',
        repo: 'consumer',
        event_type: 'go',
      });
      // `requested` went out; the run now waits ten minutes to start.
      await receiver.waitFor(
        (request) => (request.json as { action?: string } | null)?.action === 'requested',
      );
      await waitUntil(() => local.consumerRuns()[0]?.webhooks.length === 1, 'the requested delivery record');
    } finally {
      await local.close();
      await receiver.close();
    }
    const [run] = local.consumerRuns();
    expect(run).toMatchObject({ status: 'queued', completedAt: null });
    expect(run?.error).toBeUndefined();
  });
});
