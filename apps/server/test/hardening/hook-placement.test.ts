import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HookRole } from '../../src/store/schema.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';

/**
 * Placing a repository hook is serialised per repository and reconciled with
 * GitHub, so concurrent switches, and a hook GitHub has but Zekt lost track of, never leave a
 * repository with a secret GitHub does not use.
 */
let h: Harness;
let alice: string;

beforeEach(async () => {
  h = await startHarness({ transport: 'inject' });
  await h.sim.createInstallation({
    account: { login: 'acme', type: 'Organization' },
    repositories: ['api'],
    sender: { login: 'alice' },
  });
  alice = await h.tokenFor('alice');
});
afterEach(async () => {
  await h.close();
});

const SWITCH: Record<HookRole, string> = { provider: 'provider', completion: 'completion-tracking' };
const turn = (role: HookRole, enabled: boolean) =>
  h.call('PUT', `/api/v1/repositories/acme/api/${SWITCH[role]}`, { token: alice, body: { enabled } });

/** The statuses Zekt answered a workflow_run of acme/api with, one per hook GitHub has. */
async function hookAnswers(role: HookRole): Promise<number[]> {
  if (role === 'provider') {
    const run = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    return run.webhooks.map((w) => w.status ?? 0);
  }
  const deliveries = await h.sim.sendRepositoryWebhook('acme/api', 'workflow_run', {
    action: 'requested',
    workflow_run: { id: 1, event: 'push', display_title: 'x', status: 'queued' },
    repository: { id: 0 },
  });
  return deliveries.map((d) => d.status ?? 0);
}

describe.each(['provider', 'completion'] as const)('the %s hook', (role) => {
  it('survives two concurrent "enable" calls: both succeed, one hook, its secret verifies', async () => {
    const answers = await Promise.all([turn(role, true), turn(role, true)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const statuses = await hookAnswers(role);
    expect(statuses).toHaveLength(1);
    expect(statuses[0]).not.toBe(401);
    expect((await turn(role, false)).status).toBe(200);
    expect((await turn(role, true)).status).toBe(200);
    expect((await hookAnswers(role))[0]).not.toBe(401);
  });

  it('adopts the hook GitHub already has when Zekt lost track of it (422 "Hook already exists")', async () => {
    expect((await turn(role, true)).status).toBe(200);
    // A crash after GitHub created the hook and before Zekt recorded it.
    await h.zekt.store.db.deleteFrom('repository_hooks').execute();
    await h.zekt.store.db
      .updateTable('repositories')
      .set({ provider_enabled: false, completion_enabled: false })
      .execute();
    const again = await turn(role, true);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const statuses = await hookAnswers(role);
    expect(statuses).toHaveLength(1);
    expect(statuses[0]).not.toBe(401);
    const stored = await eventually(() =>
      h.zekt.store.db.selectFrom('repository_hooks').selectAll().where('role', '=', role).executeTakeFirst(),
    );
    expect(stored.hook_id).not.toBeNull();
  });
});

it('places both hooks in a repository that is a provider and a consumer', async () => {
  expect((await turn('provider', true)).status).toBe(200);
  expect((await turn('completion', true)).status).toBe(200);
  const run = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
  expect(run.webhooks.map((w) => w.status).sort()).toEqual([202, 202]);
});
