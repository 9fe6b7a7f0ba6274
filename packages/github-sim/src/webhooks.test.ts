import { createHmac } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { api, installationToken } from '../test/support/github-client.js';
import { type ReceivedRequest, type Receiver, startReceiver } from '../test/support/http-receiver.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import type { GitHubSimulator } from './index.js';

let sim: GitHubSimulator | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await sim?.close();
  await receiver?.close();
  sim = undefined;
  receiver = undefined;
});

function signatureOf(secret: string, request: ReceivedRequest): string {
  return `sha256=${createHmac('sha256', secret).update(request.rawBody).digest('hex')}`;
}

describe('App-level webhooks', () => {
  it('delivers installation.created to the App webhook URL, signed with the App secret, with GitHub’s headers', async () => {
    receiver = await startReceiver();
    sim = await createTestSimulator({
      app: { webhookUrl: `${receiver.url}/webhooks/github`, events: ['workflow_run'] },
    });
    const { installation, delivery } = await sim.createInstallation({
      account: { login: 'acme', type: 'Organization' },
      repositories: ['provider', { name: 'secret-sauce', private: true }],
      sender: { login: 'octocat' },
    });

    const request = await receiver.waitFor((r) => r.headers['x-github-event'] === 'installation');
    expect(request.path).toBe('/webhooks/github');
    expect(request.headers['x-hub-signature-256']).toBe(signatureOf(sim.app.webhookSecret, request));
    expect(request.headers['x-github-hook-id']).toBe(String(sim.app.hookId));
    expect(request.headers['x-github-hook-installation-target-type']).toBe('integration');
    expect(request.headers['x-github-hook-installation-target-id']).toBe(String(sim.app.id));
    expect(request.headers['x-github-delivery']).toBe(delivery?.guid);
    expect(request.json).toMatchObject({
      action: 'created',
      installation: {
        id: installation.id,
        account: { login: 'acme', type: 'Organization' },
        app_id: sim.app.id,
        app_slug: 'zekt-dev',
        target_type: 'Organization',
        permissions: { metadata: 'read', contents: 'write', actions: 'write', repository_hooks: 'write' },
        events: ['workflow_run'],
        repository_selection: 'selected',
      },
      repositories: [
        {
          name: 'provider',
          full_name: 'acme/provider',
          private: false,
          id: expect.any(Number),
          node_id: expect.any(String),
        },
        { name: 'secret-sauce', full_name: 'acme/secret-sauce', private: true },
      ],
      requester: null,
      sender: { login: 'octocat', type: 'User' },
    });
    expect(delivery).toMatchObject({
      status: 200,
      error: null,
      event: 'installation',
      action: 'created',
      hookType: 'app',
    });
  });

  it('sends installation_repositories added/removed and installation.deleted', async () => {
    receiver = await startReceiver();
    sim = await createTestSimulator({ app: { webhookUrl: `${receiver.url}/hook` } });
    const { installation } = await sim.createInstallation({
      account: { login: 'alice' },
      repositories: ['one'],
    });
    const added = await sim.addRepositories(installation.id, ['two']);
    expect(added.delivery?.payload).toMatchObject({
      action: 'added',
      repositories_added: [{ full_name: 'alice/two' }],
      repositories_removed: [],
    });
    expect(added.repositories.map((repo) => repo.full_name)).toEqual(['alice/one', 'alice/two']);
    const removed = await sim.removeRepositories(installation.id, ['alice/one']);
    expect(removed.delivery?.payload).toMatchObject({
      action: 'removed',
      repositories_removed: [{ full_name: 'alice/one' }],
    });
    const deleted = await sim.deleteInstallation(installation.id);
    expect(deleted.delivery).toMatchObject({ event: 'installation', action: 'deleted', status: 200 });
    expect(
      receiver.requests.map((r) => `${r.headers['x-github-event']}.${(r.json as { action: string }).action}`),
    ).toEqual([
      'installation.created',
      'installation_repositories.added',
      'installation_repositories.removed',
      'installation.deleted',
    ]);
  });

  it('records a skipped delivery when the App has no webhook URL, and uses the URL once set', async () => {
    sim = await createTestSimulator();
    const first = await sim.createInstallation({ account: { login: 'alice' }, repositories: ['one'] });
    expect(first.delivery).toMatchObject({ status: null, error: 'no webhook URL', url: null });
    receiver = await startReceiver();
    sim.setAppWebhookUrl(`${receiver.url}/hook`);
    const second = await sim.createInstallation({ account: { login: 'bob' }, repositories: ['two'] });
    expect(second.delivery).toMatchObject({ status: 200, url: `${receiver.url}/hook` });
  });
});

describe('a scripted provider run with a message', () => {
  it('posts the message first (OIDC-authenticated, like the action), then the signed workflow_run.completed', async () => {
    const zektResponses: Record<string, unknown> = { success: true, eventId: 'evt_1', consumersNotified: 0 };
    receiver = await startReceiver((request) =>
      request.path === '/api/events/receive'
        ? { status: 201, body: zektResponses }
        : { status: 200, body: {} },
    );
    sim = await createTestSimulator({
      allowPrivateHookUrls: true,
      app: { webhookUrl: `${receiver.url}/app-hook`, events: ['workflow_run'] },
    });
    const { installation } = await sim.createInstallation({
      account: { login: 'acme', type: 'Organization' },
      repositories: ['provider'],
      sender: { login: 'octocat' },
    });
    const token = await installationToken(sim, installation.id);
    const hookSecret = 'hook-secret';
    const hook = await api(sim, 'POST', '/repos/acme/provider/hooks', {
      authorization: `token ${token}`,
      body: {
        config: { url: `${receiver.url}/webhooks/github`, content_type: 'json', secret: hookSecret },
        events: ['workflow_run'],
      },
    });
    const hookId = (hook.body as { id: number }).id;
    await receiver.waitFor((r) => r.headers['x-github-event'] === 'ping');

    const result = await sim.runWorkflow({
      repository: 'acme/provider',
      workflow: 'deploy.yml',
      name: 'Deploy',
      actor: 'octocat',
      message: { zektUrl: receiver.url, eventType: 'deploy-finished', payload: { version: '1.2.3' } },
    });

    const relevant = receiver.requests.filter(
      (r) =>
        r.path === '/api/events/receive' ||
        (r.path === '/webhooks/github' && r.headers['x-github-event'] === 'workflow_run'),
    );
    expect(relevant.map((r) => r.path)).toEqual(['/api/events/receive', '/webhooks/github']);
    const [message, completed] = relevant as [ReceivedRequest, ReceivedRequest];

    expect(message.method).toBe('POST');
    expect(message.headers['content-type']).toBe('application/json');
    expect(message.headers['x-github-repository']).toBe('acme/provider');
    const bearer = String(message.headers.authorization).replace(/^Bearer /, '');
    const { payload: claims } = await jwtVerify(
      bearer,
      createRemoteJWKSet(new URL(`${sim.oidcIssuer}/.well-known/jwks`)),
      {
        issuer: sim.oidcIssuer,
        audience: 'api://zekt',
      },
    );
    expect(claims).toMatchObject({
      repository: 'acme/provider',
      run_id: String(result.run.id),
      run_attempt: '1',
    });
    expect(message.json).toEqual({
      eventType: 'deploy-finished',
      payload: { version: '1.2.3' },
      repository: 'acme/provider',
      workflowRunId: String(result.run.id),
      workflow: 'Deploy',
      triggeredBy: 'octocat',
      commitSha: result.run.head_sha,
      ref: 'refs/heads/main',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(result.message).toEqual({ status: 201, body: zektResponses });

    expect(completed.headers['x-hub-signature-256']).toBe(signatureOf(hookSecret, completed));
    expect(completed.headers['x-github-hook-id']).toBe(String(hookId));
    expect(completed.json).toMatchObject({
      action: 'completed',
      workflow_run: {
        id: result.run.id,
        name: 'Deploy',
        display_title: 'Deploy',
        path: '.github/workflows/deploy.yml',
        status: 'completed',
        conclusion: 'success',
        run_attempt: 1,
        run_number: 1,
        head_branch: 'main',
        event: 'push',
        actor: { login: 'octocat' },
      },
      workflow: { name: 'Deploy', path: '.github/workflows/deploy.yml' },
      repository: { full_name: 'acme/provider' },
      organization: { login: 'acme' },
      sender: { login: 'octocat' },
    });
    expect(completed.json).not.toHaveProperty('installation');
    expect(String(result.run.id)).toMatch(/^\d{10}$/);

    // The App subscribes to workflow_run, so the App hook gets it too, with `installation`.
    const appCopy = await receiver.waitFor(
      (r) => r.path === '/app-hook' && r.headers['x-github-event'] === 'workflow_run',
    );
    expect(appCopy.json).toMatchObject({ action: 'completed', installation: { id: installation.id } });
    expect(appCopy.headers['x-hub-signature-256']).toBe(signatureOf(sim.app.webhookSecret, appCopy));
    expect(result.webhooks.map((d) => `${d.hookType}:${d.action}:${d.status}`)).toEqual([
      'repository:completed:200',
      'app:completed:200',
    ]);

    // One event, one GUID on every hook that receives it, as GitHub's `guid` is "shared with all
    // deliveries for all webhooks that subscribe to this event"; each hook says who it is.
    const [original, toApp] = result.webhooks;
    expect(toApp?.guid).toBe(original?.guid);
    expect(toApp?.hookId).not.toBe(original?.hookId);
    expect(appCopy.headers['x-github-delivery']).toBe(original?.guid);
    expect(appCopy.headers['x-github-hook-id']).toBe(String(sim.app.hookId));

    // Redelivery: same GUID, byte-identical body, to the hook named (the GUID alone is ambiguous).
    await expect(sim.redeliver(original?.guid ?? '')).rejects.toThrow(/went to hooks .*hookId/);
    const redelivered = await sim.redeliver(original?.guid ?? '', { hookId: original?.hookId ?? 0 });
    expect(redelivered).toMatchObject({
      guid: original?.guid,
      hookId: original?.hookId,
      redelivery: true,
      status: 200,
    });
    const copies = receiver.requests.filter(
      (r) => r.headers['x-github-delivery'] === original?.guid && r.path !== '/app-hook',
    );
    expect(copies).toHaveLength(2);
    expect(copies[1]?.rawBody.equals(copies[0]?.rawBody ?? Buffer.alloc(0))).toBe(true);
    expect(copies[1]?.headers['x-hub-signature-256']).toBe(copies[0]?.headers['x-hub-signature-256']);
  });

  it('sends requested/in_progress when asked, and re-runs with run_attempt + 1', async () => {
    receiver = await startReceiver();
    sim = await createTestSimulator({ allowPrivateHookUrls: true });
    const { installation } = await sim.createInstallation({
      account: { login: 'alice' },
      repositories: ['svc'],
    });
    const token = await installationToken(sim, installation.id);
    await api(sim, 'POST', '/repos/alice/svc/hooks', {
      authorization: `token ${token}`,
      body: { config: { url: `${receiver.url}/h`, content_type: 'json' }, events: ['*'] },
    });
    const first = await sim.runWorkflow({
      repository: 'alice/svc',
      workflow: 'ci.yml',
      conclusion: 'failure',
      send: { requested: true, inProgress: true },
    });
    expect(first.webhooks.map((d) => d.action)).toEqual(['requested', 'in_progress', 'completed']);
    expect(first.run).toMatchObject({
      name: 'Ci',
      conclusion: 'failure',
      run_attempt: 1,
      actor: { login: 'alice' },
    });
    expect(first.webhooks[0]?.requestHeaders).not.toHaveProperty('X-Hub-Signature-256');

    const again = await sim.rerunWorkflow('alice/svc', first.run.id, { conclusion: 'success' });
    expect(again.run).toMatchObject({
      id: first.run.id,
      run_number: 1,
      run_attempt: 2,
      conclusion: 'success',
    });
    expect(again.run.previous_attempt_url).toBe(`${first.run.url}/attempts/1`);
    expect(again.env.GITHUB_RUN_ATTEMPT).toBe('2');
    expect(again.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN).not.toBe(first.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN);
    expect(again.webhooks[0]?.payload).toMatchObject({ workflow_run: { run_attempt: 2 } });

    const second = await sim.runWorkflow({ repository: 'alice/svc', workflow: 'ci.yml' });
    expect(second.run.run_number).toBe(2);
    expect(second.run.id).not.toBe(first.run.id);

    const fetched = await api(sim, 'GET', `/repos/alice/svc/actions/runs/${first.run.id}`, {
      authorization: `token ${token}`,
    });
    expect(fetched.body).toMatchObject({ id: first.run.id, run_attempt: 2, status: 'completed' });
  });

  it('sends hand-made events to the hooks that subscribed to them (sendRepositoryWebhook)', async () => {
    receiver = await startReceiver();
    sim = await createTestSimulator({ allowPrivateHookUrls: true });
    const { installation } = await sim.createInstallation({
      account: { login: 'alice' },
      repositories: ['svc'],
    });
    const token = await installationToken(sim, installation.id);
    await api(sim, 'POST', '/repos/alice/svc/hooks', {
      authorization: `token ${token}`,
      body: {
        config: { url: `${receiver.url}/h`, content_type: 'json', secret: 'k' },
        events: ['workflow_run'],
      },
    });
    const sent = await sim.sendRepositoryWebhook('alice/svc', 'workflow_run', {
      action: 'requested',
      custom: true,
    });
    expect(sent).toMatchObject([
      { event: 'workflow_run', action: 'requested', status: 200, repository: 'alice/svc' },
    ]);
    const received = await receiver.waitFor((r) => (r.json as { custom?: boolean } | null)?.custom === true);
    expect(received.headers['x-hub-signature-256']).toBe(signatureOf('k', received));
    expect(await sim.sendRepositoryWebhook('alice/svc', 'push', { ref: 'refs/heads/main' })).toEqual([]);
    await expect(sim.sendRepositoryWebhook('alice/none', 'push', {})).rejects.toThrow(/unknown repository/);

    // A second hook on the repository (a provider hook and a completion-tracking hook, say): each
    // event reaches both under one GUID, each hook with its own id and signature; the next event
    // has a GUID of its own.
    await api(sim, 'POST', '/repos/alice/svc/hooks', {
      authorization: `token ${token}`,
      body: {
        config: { url: `${receiver.url}/h2`, content_type: 'json', secret: 'k2' },
        events: ['workflow_run'],
      },
    });
    const both = await sim.sendRepositoryWebhook('alice/svc', 'workflow_run', { action: 'completed' });
    expect(both).toHaveLength(2);
    expect(both[1]?.guid).toBe(both[0]?.guid);
    expect(new Set(both.map((d) => d.hookId)).size).toBe(2);
    const copies = receiver.requests.filter((r) => r.headers['x-github-delivery'] === both[0]?.guid);
    expect(copies.map((r) => r.path).sort()).toEqual(['/h', '/h2']);
    const second = await receiver.waitFor(
      (r) => r.path === '/h2' && r.headers['x-github-delivery'] === both[0]?.guid,
    );
    expect(second.headers['x-hub-signature-256']).toBe(signatureOf('k2', second));
    expect(second.headers['x-github-hook-id']).toBe(String(both[1]?.hookId));
    const next = await sim.sendRepositoryWebhook('alice/svc', 'workflow_run', { action: 'completed' });
    expect(next[0]?.guid).not.toBe(both[0]?.guid);
    // Redelivered to the one hook named, under the event's GUID.
    const again = await sim.redeliver(both[0]?.guid ?? '', { hookId: both[1]?.hookId ?? 0 });
    expect(again).toMatchObject({ guid: both[0]?.guid, hookId: both[1]?.hookId, redelivery: true });
    await expect(sim.redeliver(both[0]?.guid ?? '', { hookId: 1 })).rejects.toThrow(/to hook 1/);
  });

  it('refuses runs in repositories without an installation', async () => {
    sim = await createTestSimulator();
    await expect(sim.runWorkflow({ repository: 'nobody/nothing', workflow: 'deploy.yml' })).rejects.toThrow(
      /not a repository of an installation/,
    );
  });
});
