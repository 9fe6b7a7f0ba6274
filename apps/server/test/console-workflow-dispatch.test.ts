import { describe, expect, it } from 'vitest';
import { goTo, seriousViolations } from './support/console-page.js';
import { useConsoleSuite } from './support/console-suite.js';
import { eventually } from './support/harness.js';

/**
 * Delivery by `workflow_dispatch` in the console, in Chromium: bob (globex) switches his
 * subscription to a workflow of globex/app in Consumer › Zekt Subscriptions, turns on Durable
 * Delivery with COMPLETION off (allowed in this mode: Zekt follows the run itself), a provider run is
 * delivered, and Delivery Status links to the consumer run GitHub created and shows it Completed —
 * with no confirm or complete step in the consumer workflow.
 */
const suite = useConsoleSuite({
  env: { ZEKT_RUN_FOLLOW_SCHEDULE: '200ms', ZEKT_INSTALLATION_DISPATCH_RATE: '0' },
});

describe('delivery by workflow_dispatch in the console', () => {
  it('bob switches a subscription to workflow_dispatch; Delivery Status links to the consumer run, Completed', async () => {
    const { h, world } = suite;
    h.sim.defineConsumerWorkflow({
      repository: 'globex/app',
      workflow: 'on-acme-deploy.yml',
      name: 'React to acme deployments',
      on: { workflow_dispatch: { inputs: { zekt: { required: true, type: 'string' } } } },
      durationMs: 300,
    });
    const bob = await suite.open('bob');
    const page = bob.page;
    await goTo(page, 'Consumer', 'Zekt Subscriptions');
    const row = page.getByRole('row').filter({ hasText: 'acme-deploys' });
    await row.getByRole('cell').filter({ hasText: 'repository_dispatch' }).waitFor();

    // A file name that is not one: the API's refusal shows at the field, nothing changes.
    await row.getByRole('button', { name: 'Change how acme-deploys is delivered to globex/app' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delivered as: acme-deploys to globex/app' });
    await dialog.getByRole('radio', { name: /workflow_dispatch/ }).check();
    expect(await dialog.textContent()).toContain('“Actions: read & write” permission');
    await dialog.getByRole('textbox', { name: 'Workflow file' }).fill('../on-acme-deploy.yml');
    bob.expect(/^400 \/api\/v1\/subscriptions\/sub_[0-9a-f]+$/);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'must be the file name of a workflow' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await dialog.getByRole('textbox', { name: 'Workflow file' }).fill('on-acme-deploy.yml');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const deliveredAs = row.getByRole('cell').filter({ hasText: 'workflow_dispatch' });
    await deliveredAs.waitFor();
    expect(await deliveredAs.textContent()).toContain('on-acme-deploy.yml on the default branch');

    // COMPLETION is off for globex/app, and Durable Delivery switches on all the same.
    expect(await row.textContent()).toContain('COMPLETION off');
    const durable = row.getByRole('switch', { name: 'Durable Delivery: acme-deploys to globex/app' });
    await durable.click();
    await expect.poll(() => durable.getAttribute('aria-checked')).toBe('true');
    await row.getByText('COMPLETION off: Zekt reads the runs').waitFor();
    const subscription = await h.call('GET', `/api/v1/subscriptions/${world.subscriptionId}`, {
      token: world.consumerToken,
    });
    expect(subscription.body).toMatchObject({
      durable: true,
      completionTracking: false,
      deliveryMode: 'workflow_dispatch',
      workflowDispatch: { workflow: 'on-acme-deploy.yml', ref: null },
    });

    const { run } = await h.sim.runWorkflow({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { version: '5.0.0' } },
    });
    await goTo(page, 'Consumer', 'Delivery Status');
    const delivery = page
      .locator('table[aria-label="Deliveries"] tbody tr')
      .filter({ hasText: `acme/api #${run.id}` });
    await expect
      .poll(() => delivery.locator('.badge').allTextContents(), { timeout: 20_000 })
      .toEqual(['Completed']);
    const [consumerRun] = h.sim.consumerRuns({ repository: 'globex/app' });
    expect(consumerRun).toMatchObject({ trigger: 'workflow_dispatch', status: 'completed', calls: [] });
    const link = delivery.getByRole('link', { name: `Consumer run ${consumerRun?.id} of globex/app` });
    expect(await link.getAttribute('href')).toBe(`${h.sim.url}/globex/app/actions/runs/${consumerRun?.id}`);

    const record = await eventually(async () => {
      const list = await h.call('GET', `/api/v1/deliveries?runId=${run.id}`, { token: world.consumerToken });
      return list.body.deliveries?.[0];
    });
    expect(record).toMatchObject({
      deliveryStatus: 'Completed',
      consumerWorkflowConclusion: 'success',
      consumerRun: {
        id: consumerRun?.id,
        htmlUrl: `${h.sim.url}/globex/app/actions/runs/${consumerRun?.id}`,
      },
      notStartedAt: null,
    });

    // The delivery's page links to the same run.
    await delivery.getByRole('link', { name: `acme-deployed, delivery ${record.deliveryId}` }).click();
    const summary = page.getByRole('region', { name: 'Summary' });
    await summary.getByRole('link', { name: `Consumer run ${consumerRun?.id} of globex/app` }).waitFor();
  });
});
