import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, installationToken } from '../test/support/github-client.js';
import { type Receiver, startReceiver } from '../test/support/http-receiver.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import type { GitHubSimulator } from './index.js';

let sim: GitHubSimulator;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  sim = await createTestSimulator();
});
afterAll(async () => {
  await sim.close();
  await receiver.close();
});

async function control(method: string, path: string, body?: unknown, rawBody?: string) {
  const response = await fetch(`${sim.url}/_sim${path}`, {
    method,
    headers: body === undefined && rawBody === undefined ? {} : { 'content-type': 'application/json' },
    body: rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
}

describe('the control API (/_sim)', () => {
  it('mirrors the programmatic API and answers bad input with 400 { error }', async () => {
    expect(await control('PUT', '/app/webhook', { url: 'ftp://nope' })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('http(s) URL') },
    });
    const webhook = await control('PUT', '/app/webhook', { url: `${receiver.url}/app` });
    expect(webhook).toMatchObject({
      status: 200,
      body: { webhookUrl: `${receiver.url}/app`, id: sim.app.id },
    });

    expect((await control('POST', '/installations', { account: {}, repositories: [] })).status).toBe(400);
    expect((await control('POST', '/installations', undefined, '{"account":')).status).toBe(400);
    const created = await control('POST', '/installations', {
      account: { login: 'acme' },
      repositories: ['a'],
    });
    expect(created).toMatchObject({
      status: 201,
      body: { installation: { account: { login: 'acme' } }, delivery: { status: 200 } },
    });
    const id = (created.body as { installation: { id: number } }).installation.id;

    const added = await control('POST', `/installations/${id}/repositories`, { repositories: ['b'] });
    expect(
      (added.body as { repositories: Array<{ full_name: string }> }).repositories.map((r) => r.full_name),
    ).toEqual(['acme/a', 'acme/b']);
    expect(
      (await control('DELETE', `/installations/${id}/repositories`, { repositories: ['acme/zzz'] })).status,
    ).toBe(400);
    const removed = await control('DELETE', `/installations/${id}/repositories`, {
      repositories: ['acme/b'],
    });
    expect(removed).toMatchObject({ status: 200, body: { delivery: { action: 'removed' } } });

    expect((await control('POST', '/repos/acme/a/runs', { workflow: '../evil' })).status).toBe(400);
    const run = await control('POST', '/repos/acme/a/runs', {
      workflow: 'deploy.yml',
      conclusion: 'cancelled',
    });
    expect(run).toMatchObject({ status: 201, body: { run: { conclusion: 'cancelled' }, message: null } });
    const runId = (run.body as { run: { id: number } }).run.id;
    const rerun = await control('POST', `/repos/acme/a/runs/${runId}/rerun`, {});
    expect(rerun).toMatchObject({
      status: 201,
      body: { run: { id: runId, run_attempt: 2, conclusion: 'success' } },
    });

    expect(await control('POST', '/repos/acme/a/webhooks', { event: 'push', payload: {} })).toEqual({
      status: 200,
      body: [],
    });
    expect((await control('POST', '/repos/acme/a/webhooks', { event: 'push', payload: 'x' })).status).toBe(
      400,
    );

    const token = await control('POST', '/oidc/token', {
      repository: 'acme/a',
      runId,
      audience: 'api://zekt',
    });
    expect((token.body as { token: string }).token.split('.')).toHaveLength(3);
    expect((await control('POST', '/oidc/token', { repository: 'acme/unknown' })).status).toBe(400);

    const installation = await installationToken(sim, id);
    await api(sim, 'POST', '/repos/acme/a/dispatches', {
      authorization: `token ${installation}`,
      body: { event_type: 'go' },
    });
    expect(await control('GET', '/dispatches?repository=acme/a')).toMatchObject({
      status: 200,
      body: [{ repository: 'acme/a', eventType: 'go', installationId: id }],
    });
    expect((await control('GET', '/dispatches?repository=acme/b')).body).toEqual([]);

    const journal = await control('GET', '/journal');
    expect((journal.body as Array<{ path: string }>).map((entry) => entry.path)).toContain(
      '/api/v3/repos/acme/a/dispatches',
    );
    expect((await control('DELETE', '/journal')).status).toBe(204);
    expect((await control('GET', '/journal')).body).toEqual([]);

    const deliveries = (await control('GET', '/webhook-deliveries')).body as Array<{
      guid: string;
      event: string;
    }>;
    expect(deliveries.map((d) => d.event)).toContain('installation');
    const guid = deliveries[0]?.guid ?? '';
    expect(await control('POST', `/webhook-deliveries/${guid}/redeliver`)).toMatchObject({
      status: 200,
      body: { guid, redelivery: true },
    });
    expect((await control('POST', '/webhook-deliveries/nope/redeliver')).status).toBe(400);
    expect(
      await control('POST', `/webhook-deliveries/${guid}/redeliver?hook_id=${sim.app.hookId}`),
    ).toMatchObject({ status: 200, body: { guid, hookId: sim.app.hookId, redelivery: true } });
    expect((await control('POST', `/webhook-deliveries/${guid}/redeliver?hook_id=x`)).status).toBe(400);

    expect((await control('DELETE', `/installations/${id}`)).body).toMatchObject({
      delivery: { action: 'deleted' },
    });
    expect((await control('DELETE', `/installations/${id}`)).status).toBe(400);
    expect(await control('GET', '/nothing-here')).toMatchObject({
      status: 404,
      body: { error: expect.any(String) },
    });
  });
});
