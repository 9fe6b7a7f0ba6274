import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpWorld, type World } from '../support/demo-world.js';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * JSON nested deeper than any real document is refused while it is parsed,
 * with 400 `json_too_deep`, on every way JSON comes in: request bodies, webhooks, and a message
 * payload sent as a string holding JSON.
 */
let h: Harness;
let world: World;
beforeAll(async () => {
  h = await startHarness();
  world = await setUpWorld(h);
});
afterAll(async () => {
  await h.close();
});

const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

async function expectTooDeep(response: Response) {
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  const problem = (await response.json()) as { status: number; code: string; detail: string };
  expect([response.status, problem.code]).toEqual([400, 'json_too_deep']);
  expect(problem.detail).toMatch(/nest/);
}

describe('deep JSON', () => {
  it('in a message payload (10,000 levels, as JSON or as a string holding JSON)', async () => {
    const token = await h.sim.mintOidcToken({ repository: 'acme/api', workflow: 'deploy.yml' });
    const send = (body: string) =>
      fetch(`${h.url}/api/events/receive`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body,
      });
    await expectTooDeep(await send(`{"eventType":"deployed","payload":${deepArray(10_000)}}`));
    await expectTooDeep(await send(`{"eventType":"deployed","payload":${deepObject(10_000)}}`));
    await expectTooDeep(await send(JSON.stringify({ eventType: 'deployed', payload: deepArray(10_000) })));
    expect(await h.zekt.store.db.selectFrom('messages').selectAll().execute()).toEqual([]);
    const fine = await send(JSON.stringify({ eventType: 'deployed', payload: JSON.parse(deepArray(50)) }));
    expect(fine.status).toBe(201);
  });

  it('in a management API body', async () => {
    const response = await fetch(`${h.url}/api/v1/services`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${world.providerToken}` },
      body: `{"repository":"acme/api","workflow":"deploy.yml","slug":"deep","tags":${deepArray(5_000)}}`,
    });
    await expectTooDeep(response);
  });

  it('in a signed webhook (a field that is a 4,000-level array)', async () => {
    for (const event of ['installation', 'workflow_run', 'ping']) {
      const body = `{"action":"created","installation":{"id":1},"x":${deepArray(4_000)}}`;
      const response = await fetch(`${h.url}/webhooks/github`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': event,
          'x-github-delivery': randomUUID(),
          'x-github-hook-id': String(h.sim.app.hookId),
          'x-hub-signature-256': `sha256=${createHmac('sha256', h.sim.app.webhookSecret).update(body).digest('hex')}`,
        },
        body,
      });
      await expectTooDeep(response);
    }
  });
});
