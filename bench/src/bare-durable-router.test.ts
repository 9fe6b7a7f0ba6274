import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitHubSimulator, type DispatchRecord, type GitHubSimulator } from 'zekt-github-sim';
import { createBareDurableRouter } from './bare-durable-router.js';
import { completedRunTemplate } from './comparison-targets.js';

/**
 * The bare durable router is a reference the bench reads Zekt against: it must do what it says
 * (verify, store before answering, dispatch what GitHub accepts, record the outcome), or its
 * figures say nothing.
 */
describe('the bare durable router', () => {
  let sim: GitHubSimulator;
  let router: Server;
  let url: string;
  let dataDir: string;
  let template: Record<string, unknown>;
  const dispatches: DispatchRecord[] = [];

  beforeAll(async () => {
    sim = await createGitHubSimulator({ host: '127.0.0.1', port: 0, onDispatch: (d) => dispatches.push(d) });
    const provider = await sim.createInstallation({
      account: { login: 'acme', type: 'Organization' },
      repositories: ['api'],
      sender: { login: 'alice' },
    });
    const consumer = await sim.createInstallation({
      account: { login: 'globex', type: 'Organization' },
      repositories: ['deployer'],
      sender: { login: 'bob' },
    });
    const repo = provider.repositories[0];
    if (!repo) throw new Error('no provider repository');
    template = await completedRunTemplate({
      id: repo.id,
      name: repo.name,
      full_name: repo.full_name,
      owner: { login: repo.owner.login, id: repo.owner.id },
    });
    dataDir = mkdtempSync(join(tmpdir(), 'bare-durable-test-'));
    router = createBareDurableRouter({
      dataDir,
      appId: sim.app.id,
      privateKey: sim.app.privateKeyPem,
      webhookSecret: sim.app.webhookSecret,
      apiUrl: sim.apiUrl,
      eventType: 'acme-deployed',
      consumers: [{ installationId: consumer.installation.id, owner: 'globex', repo: 'deployer' }],
    });
    await new Promise<void>((resolve) => router.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(router.address() as AddressInfo).port}/webhooks/github`;
  });

  afterAll(async () => {
    await new Promise((resolve) => router.close(resolve));
    await sim.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const send = (runId: number, secret = sim.app.webhookSecret) => {
    const body = JSON.stringify({
      ...template,
      workflow_run: { ...(template.workflow_run as object), id: runId },
    });
    return fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'workflow_run',
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
      body,
    });
  };

  const rows = () => {
    const db = new Database(join(dataDir, 'bare.db'), { readonly: true });
    try {
      return db
        .prepare(
          'SELECT e.run_id AS runId, d.consumer, d.state, d.attempts FROM deliveries d JOIN events e ON e.id = d.event_id ORDER BY e.run_id',
        )
        .all();
    } finally {
      db.close();
    }
  };

  const until = async (done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(done()).toBe(true);
  };

  it('stores the event before it answers, dispatches it, and records that GitHub took it', async () => {
    const answer = await send(7001);
    expect(answer.status).toBe(202);
    // Answered only after the commit: the event and its delivery are in the file already.
    expect(rows()).toEqual([
      expect.objectContaining({ runId: 7001, consumer: 'globex/deployer', state: expect.any(String) }),
    ]);
    await until(() => dispatches.length === 1);
    expect(dispatches[0]).toMatchObject({
      repository: 'globex/deployer',
      eventType: 'acme-deployed',
      clientPayload: { zekt: { correlationId: '7001', event: { repository: 'acme/api', runId: '7001' } } },
    });
    await until(() => (rows()[0] as { state: string }).state === 'sent');
    expect(rows()).toEqual([{ runId: 7001, consumer: 'globex/deployer', state: 'sent', attempts: 1 }]);
  });

  it('answers a run it has stored already as a duplicate, and dispatches it once', async () => {
    const answer = await send(7001);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ outcome: 'duplicate' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(dispatches).toHaveLength(1);
  });

  it('refuses a webhook signed with another secret, and stores nothing of it', async () => {
    const answer = await send(7002, 'not-the-secret');
    expect(answer.status).toBe(401);
    expect(rows().map((r) => (r as { runId: number }).runId)).toEqual([7001]);
  });
});
