import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { api, installationToken } from '../test/support/github-client.js';
import { type Receiver, startReceiver } from '../test/support/http-receiver.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import { waitUntil } from '../test/support/wait-until.js';
import type { GitHubSimulator } from './index.js';

const CREATE_DOCS = 'https://docs.github.com/rest/repos/webhooks#create-a-repository-webhook';

let sim: GitHubSimulator | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await sim?.close();
  await receiver?.close();
  sim = undefined;
  receiver = undefined;
});

async function setUp(allowPrivateHookUrls: boolean) {
  sim = await createTestSimulator({ allowPrivateHookUrls });
  const { installation, repositories } = await sim.createInstallation({
    account: { login: 'acme', type: 'Organization' },
    repositories: ['provider'],
  });
  const token = await installationToken(sim, installation.id);
  const repoId = repositories[0]?.id;
  return { sim, token, repoId, authorization: `token ${token}` };
}

describe('repository hooks on github.com (private URLs refused)', () => {
  it.each([
    ['http://localhost:3000/webhooks/github', 'localhost'],
    ['http://127.0.0.1:3000/webhooks/github', 'localhost'],
    ['http://[::1]:3000/hook', 'localhost'],
    ['http://app.localhost/hook', 'localhost'],
    ['http://10.1.2.3/hook', 'private network'],
    ['http://192.168.0.10/hook', 'private network'],
    ['http://172.20.0.1/hook', 'private network'],
  ])('refuses %s with GitHub’s 422 body', async (url, detail) => {
    const { sim, authorization } = await setUp(false);
    const response = await api(sim, 'POST', '/repos/acme/provider/hooks', {
      authorization,
      body: { name: 'web', config: { url, content_type: 'json' }, events: ['workflow_run'] },
    });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      message: 'Validation Failed',
      errors: [
        {
          resource: 'Hook',
          code: 'custom',
          field: 'url',
          message: `url is not supported because it isn't reachable over the public Internet (${detail})`,
        },
      ],
      documentation_url: CREATE_DOCS,
      status: '422',
    });
  });

  it('accepts a public URL', async () => {
    const { sim, authorization } = await setUp(false);
    const response = await api(sim, 'POST', '/repos/acme/provider/hooks', {
      authorization,
      // TEST-NET-1: a public address nobody answers on; the ping is aborted when the simulator closes.
      body: { config: { url: 'https://192.0.2.10/hook', content_type: 'json' } },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      events: ['push'],
      active: true,
      config: { url: 'https://192.0.2.10/hook' },
    });
  });
});

describe('repository hooks with allowPrivateHookUrls (GHES on a private network)', () => {
  it('creates, lists, gets, updates and deletes a hook without ever returning its secret', async () => {
    const { sim, authorization } = await setUp(true);
    receiver = await startReceiver();
    const created = await api(sim, 'POST', '/repos/acme/provider/hooks', {
      authorization,
      body: {
        config: { url: `${receiver.url}/hook`, content_type: 'json', secret: 's3cret' },
        events: ['workflow_run'],
      },
    });
    expect(created.status).toBe(201);
    const hook = created.body as { id: number; url: string; config: Record<string, string> };
    expect(hook.config).toEqual({
      url: `${receiver.url}/hook`,
      content_type: 'json',
      insecure_ssl: '0',
      secret: '********',
    });
    expect(created.headers.get('location')).toBe(hook.url);
    expect(JSON.stringify(sim.journal())).not.toContain('"secret":"s3cret"}}"');

    const listed = await api(sim, 'GET', '/repos/acme/provider/hooks', { authorization });
    expect(listed.body).toEqual([expect.objectContaining({ id: hook.id, events: ['workflow_run'] })]);
    const fetched = await api(sim, 'GET', `/repos/acme/provider/hooks/${hook.id}`, { authorization });
    expect(fetched.body).toMatchObject({ id: hook.id, config: { secret: '********' } });

    const patched = await api(sim, 'PATCH', `/repos/acme/provider/hooks/${hook.id}`, {
      authorization,
      body: { add_events: ['push'], active: false },
    });
    expect(patched.body).toMatchObject({
      events: ['workflow_run', 'push'],
      active: false,
      config: { secret: '********' },
    });
    // A new config without a secret removes the secret, as GitHub documents for this endpoint.
    const replaced = await api(sim, 'PATCH', `/repos/acme/provider/hooks/${hook.id}`, {
      authorization,
      body: { config: { url: `${receiver.url}/other`, content_type: 'json' } },
    });
    expect((replaced.body as { config: Record<string, string> }).config).not.toHaveProperty('secret');

    expect(
      (await api(sim, 'DELETE', `/repos/acme/provider/hooks/${hook.id}`, { authorization })).status,
    ).toBe(204);
    expect((await api(sim, 'GET', `/repos/acme/provider/hooks/${hook.id}`, { authorization })).status).toBe(
      404,
    );
  });

  it('delivers a ping signed with the hook secret, with GitHub’s headers, after creation and on /pings', async () => {
    const { sim, authorization, repoId } = await setUp(true);
    receiver = await startReceiver();
    const secret = 'It’s a Secret to Everybody';
    const created = await api(sim, 'POST', '/repos/acme/provider/hooks', {
      authorization,
      body: {
        config: { url: `${receiver.url}/hook`, content_type: 'json', secret },
        events: ['workflow_run'],
      },
    });
    const hookId = (created.body as { id: number }).id;

    const ping = await receiver.waitFor((request) => request.headers['x-github-event'] === 'ping');
    const expected256 = createHmac('sha256', secret).update(ping.rawBody).digest('hex');
    const expected1 = createHmac('sha1', secret).update(ping.rawBody).digest('hex');
    expect(ping.headers['x-hub-signature-256']).toBe(`sha256=${expected256}`);
    expect(ping.headers['x-hub-signature']).toBe(`sha1=${expected1}`);
    expect(ping.headers['content-type']).toBe('application/json');
    expect(ping.headers['user-agent']).toMatch(/^GitHub-Hookshot\/[0-9a-f]+$/);
    expect(ping.headers['x-github-hook-id']).toBe(String(hookId));
    expect(ping.headers['x-github-hook-installation-target-type']).toBe('repository');
    expect(ping.headers['x-github-hook-installation-target-id']).toBe(String(repoId));
    expect(ping.headers['x-github-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    expect(ping.json).toMatchObject({
      zen: expect.any(String),
      hook_id: hookId,
      hook: { id: hookId, type: 'Repository', events: ['workflow_run'], config: { secret: '********' } },
      repository: { full_name: 'acme/provider' },
      organization: { login: 'acme' },
      sender: { login: 'zekt-dev[bot]', type: 'Bot' },
    });

    expect(
      (await api(sim, 'POST', `/repos/acme/provider/hooks/${hookId}/pings`, { authorization })).status,
    ).toBe(204);
    await receiver.waitFor(
      (request) =>
        request.headers['x-github-event'] === 'ping' &&
        request.headers['x-github-delivery'] !== ping.headers['x-github-delivery'],
    );
    const pings = await waitUntil(() => {
      const recorded = sim.webhookDeliveries().filter((delivery) => delivery.event === 'ping');
      return recorded.length === 2 && recorded;
    }, 'two recorded pings');
    expect(pings.map((delivery) => delivery.status)).toEqual([200, 200]);
  });

  it.each([
    [{ url: 'http://127.0.0.1:9/x', content_type: 'form' }, 'content_type'],
    [{ url: 'http://127.0.0.1:9/x' }, 'content_type'],
    [{ content_type: 'json' }, undefined],
    [{ url: 'not a url', content_type: 'json' }, 'url'],
  ])('refuses config %j with 422', async (config, field) => {
    const { sim, authorization } = await setUp(true);
    const response = await api(sim, 'POST', '/repos/acme/provider/hooks', {
      authorization,
      body: { config },
    });
    expect(response.status).toBe(422);
    const [error] = (response.body as { errors: Array<{ field?: string; message: string }> }).errors;
    expect(error?.field).toBe(field);
    if (field === 'content_type') expect(error?.message).toContain('only delivers JSON');
  });

  it('refuses a duplicate hook and unknown event names, and needs the repository_hooks permission', async () => {
    const { sim, authorization } = await setUp(true);
    const body = { config: { url: 'http://127.0.0.1:9/x', content_type: 'json' }, events: ['workflow_run'] };
    expect((await api(sim, 'POST', '/repos/acme/provider/hooks', { authorization, body })).status).toBe(201);
    const duplicate = await api(sim, 'POST', '/repos/acme/provider/hooks', { authorization, body });
    expect(duplicate.status).toBe(422);
    expect(duplicate.body).toMatchObject({ errors: [{ message: 'Hook already exists on this repository' }] });
    const badEvent = await api(sim, 'POST', '/repos/acme/provider/hooks', {
      authorization,
      body: {
        ...body,
        config: { url: 'http://127.0.0.1:9/y', content_type: 'json' },
        events: ['workflow-run'],
      },
    });
    expect(badEvent.status).toBe(422);

    const { installation } = await sim.createInstallation({
      account: { login: 'nohooks' },
      repositories: ['r'],
      permissions: { contents: 'write' },
    });
    const token = await installationToken(sim, installation.id);
    const forbidden = await api(sim, 'POST', '/repos/nohooks/r/hooks', {
      authorization: `token ${token}`,
      body,
    });
    expect(forbidden.status).toBe(403);
  });
});
