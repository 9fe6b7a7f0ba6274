import type { Locator } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { createRecoveryRunner } from '../src/delivery/recovery-runner.js';
import { goTo, seriousViolations } from './support/console-page.js';
import { useConsoleSuite } from './support/console-suite.js';
import type { World } from './support/demo-world.js';
import { eventually, type Harness } from './support/harness.js';

/**
 * Bulk recovery and the audit trail in the console, in Chromium against the
 * service and the simulator. The service runs without its worker loops: the test routes,
 * dispatches and runs recoveries itself, so a recovery is still running exactly as long as the
 * test wants it to (cancel is pressed on a job no worker can finish first).
 */
// biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
const RUN_NAME = 'zekt ${{ github.event.client_payload.zekt.deliveryId }}';

const suite = useConsoleSuite({ workers: false, env: { ZEKT_RETRY_SCHEDULE: '0s' } });
let h: Harness;
let world: World;
beforeEach(() => {
  ({ h, world } = suite);
});
const open = suite.open;

/** The worker's part, done by the test: route the events that arrived, dispatch what is due. */
async function work(): Promise<void> {
  await h.zekt.router.routeDue();
  await h.zekt.dispatcher.dispatchDue();
}

async function deliveries() {
  return h.zekt.store.db.selectFrom('deliveries').selectAll().orderBy('delivery_id').execute();
}

/** `runs` provider runs while GitHub refuses every dispatch to globex/app: their deliveries fail. */
async function outage(runs: number): Promise<string[]> {
  const before = new Set((await deliveries()).map((d) => d.delivery_id));
  const fault = h.sim.injectFaults({
    method: 'POST',
    path: '/repos/globex/app/dispatches',
    faults: [{ kind: 'status', status: 404 }],
    repeat: true,
  });
  for (let i = 0; i < runs; i++) await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
  const failed = await eventually(async () => {
    await work();
    const fresh = (await deliveries()).filter((d) => !before.has(d.delivery_id));
    return fresh.length === runs && fresh.every((d) => d.status === 'Failed')
      ? fresh.map((d) => d.delivery_id)
      : undefined;
  }, 20_000);
  h.sim.clearFaults(fault.id);
  return failed;
}

/** Runs the connection's recoveries to their end, as a worker-role process would. */
async function runRecoveries(): Promise<void> {
  const runner = createRecoveryRunner({
    store: h.zekt.store,
    clock: { now: () => Date.now() },
    wakeDispatcher: () => {},
  });
  while ((await runner.runOnce()) > 0) {}
}

const replayedDispatches = () =>
  h.sim
    .dispatches({ repository: 'globex/app' })
    .map((d) => (d.clientPayload as { zekt: { deliveryId: string; isReplay: boolean } }).zekt)
    .filter((z) => z.isReplay)
    .map((z) => z.deliveryId);

async function rows(table: Locator): Promise<string[][]> {
  const result: string[][] = [];
  for (const row of await table.locator('tbody tr').all()) {
    result.push((await row.locator('td').allTextContents()).map((text) => text.trim()));
  }
  return result;
}

describe('Recover and Audit', () => {
  it('recovers the failed deliveries of an outage with a preview, shows its progress, cancels another, and lists it all in Audit', async () => {
    const bob = await open('bob');
    bob.expect(/^400 \/api\/v1\/connections\/[^/]+\/recoveries\/preview$/);

    // A configuration change through the UI: Durable Delivery on (completion tracking first, by API).
    const tracking = await h.call('PUT', '/api/v1/repositories/globex/app/completion-tracking', {
      token: world.consumerToken,
      body: { enabled: true },
    });
    expect(tracking.status).toBe(200);
    await goTo(bob.page, 'Consumer', 'Zekt Subscriptions');
    const durable = bob.page.getByRole('switch', { name: 'Durable Delivery: acme-deploys to globex/app' });
    await durable.click();
    await expect.poll(() => durable.getAttribute('aria-checked'), { timeout: 10_000 }).toBe('true');
    // The switch shows its new position while it saves: the API is read once it is no longer busy.
    await expect.poll(() => durable.getAttribute('aria-busy'), { timeout: 10_000 }).toBe('false');
    const subscription = await h.call('GET', `/api/v1/subscriptions/${world.subscriptionId}`, {
      token: world.consumerToken,
    });
    expect(subscription.body.durable).toBe(true);

    // The consumer's workflow runs each dispatch to success; then an outage fails two deliveries.
    h.sim.defineConsumerWorkflow({
      repository: 'globex/app',
      workflow: 'on-deploy.yml',
      types: ['acme-deployed'],
      runName: RUN_NAME,
      conclusion: 'success',
    });
    const failed = await outage(2);

    await goTo(bob.page, null, 'My Connections');
    const card = bob.page.getByRole('list', { name: 'Connections' }).getByRole('listitem').first();
    await card.getByRole('button', { name: 'Recover deliveries of acme-deploys to globex/app' }).click();
    const dialog = bob.page.getByRole('dialog', { name: 'Recover deliveries of acme-deploys to globex/app' });
    await dialog.waitFor();
    expect(new URL(bob.page.url()).searchParams.get('recover')).toBe(world.subscriptionId);

    // A window in the future: the API's refusal, in its words, and nothing to start.
    const since = dialog.getByLabel('Since');
    const dayAgo = await since.inputValue();
    await since.fill('2099-01-01T00:00');
    await dialog.getByText('since is in the future: give a time in the past').waitFor();
    expect(await dialog.getByRole('button', { name: 'Recover', exact: true }).isDisabled()).toBe(true);

    // The preview counts exactly the failed deliveries.
    await since.fill(dayAgo);
    await dialog.getByText('2 deliveries would be replayed', { exact: true }).waitFor();
    expect(await seriousViolations(bob.page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Recover 2 deliveries' }).click();
    await dialog.getByText('0 of 2 handled', { exact: true }).waitFor();
    // The pressed button is gone: the focus moved to the progress that replaced it.
    await dialog.locator('section[aria-label="Recovery progress"]:focus').waitFor();
    expect(await dialog.getByRole('button', { name: 'Cancel recovery' }).isEnabled()).toBe(true);
    const started = await h.call('GET', `/api/v1/connections/${world.subscriptionId}/recoveries`, {
      token: world.providerToken,
    });
    expect(started.body.recoveries).toHaveLength(1);
    expect(started.body.recoveries[0]).toMatchObject({ status: 'running', total: 2, states: ['failed'] });

    // A worker runs it: the dialog follows it to its end.
    await runRecoveries();
    await dialog.getByText('Done: 2 of 2 handled', { exact: true }).waitFor();
    expect(await dialog.locator('.stats').textContent()).toBe('Total2Replayed2Skipped0');

    // Each failed delivery was sent again exactly once, and its replay completed.
    const replays = (await deliveries()).filter((d) => d.replay_of !== null);
    expect(replays.map((d) => d.replay_of).sort()).toEqual([...failed].sort());
    await eventually(async () => {
      await work();
      return replayedDispatches().length === 2 ? true : undefined;
    });
    expect(replayedDispatches().sort()).toEqual(replays.map((d) => d.delivery_id).sort());
    for (const replay of replays) {
      await eventually(async () => {
        await work();
        const record = await h.call('GET', `/api/v1/deliveries/${replay.delivery_id}`, {
          token: world.consumerToken,
        });
        return record.body.deliveryStatus === 'Completed' ? true : undefined;
      }, 20_000);
    }

    // Another failure; a second recovery is started and cancelled before any worker takes it.
    const [third] = await outage(1);
    await dialog.getByRole('button', { name: 'New recovery' }).click();
    await dialog.locator('input[type="checkbox"]:focus').waitFor();
    await dialog
      .getByText('1 delivery would be replayed (of 3 in the window; 2 replayed already)', { exact: false })
      .waitFor();
    await dialog.getByRole('button', { name: 'Recover 1 delivery' }).click();
    await dialog.getByText('0 of 3 handled', { exact: true }).waitFor();
    // A reload comes back to the running job (the dialog is in the URL).
    await bob.page.reload();
    await dialog.getByText('0 of 3 handled', { exact: true }).waitFor();
    await dialog.getByRole('button', { name: 'Cancel recovery' }).click();
    await dialog.getByText('Cancelled after 0 of 3', { exact: true }).waitFor();
    await runRecoveries();
    await work();
    const list = await h.call('GET', `/api/v1/connections/${world.subscriptionId}/recoveries`, {
      token: world.consumerToken,
    });
    expect(list.body.recoveries.map((r: { status: string }) => r.status)).toEqual(['cancelled', 'completed']);
    expect((await deliveries()).find((d) => d.delivery_id === third)?.replayed_by).toBeNull();
    expect(replayedDispatches()).toHaveLength(2);

    // Escape closes the dialog and takes it out of the URL.
    await bob.page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    expect(new URL(bob.page.url()).searchParams.get('recover')).toBeNull();

    // Audit: newest first, with bob's login, the recoveries and the Durable Delivery switch.
    await goTo(bob.page, null, 'Audit');
    const audit = bob.page.getByRole('table', { name: 'Audit trail' });
    await audit.getByText('Recovery cancelled').waitFor();
    const [secondStart, firstStart] = list.body.recoveries.map((r: { id: string }) => r.id);
    const bobRows = await rows(audit);
    expect(bobRows.map((r) => [r[1], r[2]]).slice(0, 4)).toEqual([
      ['bob', 'Recovery cancelled'],
      ['bob', 'Recovery started'],
      ['bob', 'Recovery started'],
      ['bob', 'Durable Delivery switch'],
    ]);
    expect(bobRows[0]?.[3]).toBe(`recovery ${secondStart}`);
    expect(bobRows[2]?.[3]).toBe(`recovery ${firstStart}`);
    expect(bobRows[2]?.[4]).toContain('total: 2');
    expect(bobRows[3]?.[4]).toBe('durable: false → true');
    expect(bobRows.some((r) => r[2] === 'COMPLETION switch' && r[5] === 'globex')).toBe(true);
    expect(await seriousViolations(bob.page)).toEqual([]);

    // A filter lives in the URL and survives a reload.
    await bob.page.getByLabel('Action').selectOption('recovery.start');
    await expect.poll(async () => (await rows(audit)).length).toBe(2);
    await bob.page.reload();
    await bob.page.getByRole('heading', { level: 1, name: 'Audit' }).waitFor();
    await expect.poll(async () => (await rows(audit)).length).toBe(2);
    expect(new URL(bob.page.url()).search).toBe('?action=recovery.start');

    // The provider sees the connection's changes (both parties do) but not the consumer's own.
    const alice = await open('alice');
    await goTo(alice.page, null, 'Audit');
    const aliceAudit = alice.page.getByRole('table', { name: 'Audit trail' });
    await aliceAudit.getByText('Recovery cancelled').waitFor();
    const aliceRows = await rows(aliceAudit);
    expect(aliceRows.filter((r) => r[2] === 'Recovery started')).toHaveLength(2);
    expect(aliceRows.some((r) => r[2] === 'COMPLETION switch')).toBe(false);
    expect(aliceRows.every((r) => r[5] === 'acme')).toBe(true);
    expect(await alice.page.getByLabel('Account').locator('option').allTextContents()).toEqual([
      'All',
      'acme',
    ]);
    const foreign = await h.call('GET', '/api/v1/audit?account=globex', { token: world.providerToken });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'account_not_found']);

    // A user of an unrelated account sees no entry at all.
    await h.sim.createInstallation({
      account: { login: 'initech', type: 'Organization' },
      repositories: ['tps'],
      sender: { login: 'carl' },
    });
    const carl = await open('carl');
    await goTo(carl.page, null, 'Audit');
    await carl.page.getByText('No changes recorded yet.', { exact: true }).waitFor();
    expect(await carl.page.getByRole('table', { name: 'Audit trail' }).count()).toBe(0);
  }, 180_000);

  it('says so in words when a recovery of the connection is already running', async () => {
    const failed = await outage(1);
    expect(failed).toHaveLength(1);
    const bob = await open('bob');
    bob.expect(/^409 \/api\/v1\/connections\/[^/]+\/recoveries$/);
    await bob.page.goto(`${h.url}/connections?recover=${world.subscriptionId}`);
    const dialog = bob.page.getByRole('dialog', { name: 'Recover deliveries of acme-deploys to globex/app' });
    await dialog.getByText('1 delivery would be replayed', { exact: true }).waitFor();
    // Meanwhile the provider starts one through the API.
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const other = await h.call('POST', `/api/v1/connections/${world.subscriptionId}/recoveries`, {
      token: world.providerToken,
      body: { since },
    });
    expect(other.status).toBe(202);
    await dialog.getByRole('button', { name: 'Recover 1 delivery' }).click();
    await dialog
      .getByText(`recovery ${other.body.id} of this connection is still running`, { exact: false })
      .waitFor();
    expect(await seriousViolations(bob.page)).toEqual([]);
  });
});
