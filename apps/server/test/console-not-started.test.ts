import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_SETUP_TIMEOUT_MS, launchChromium } from './support/browser.js';
import { type ConsoleUser, goTo, openConsole } from './support/console-page.js';
import { eventually } from './support/harness.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { type JsonBody, json, ProcessGroup } from './support/processes.js';
import { type RemoteWorld, setUpRemoteWorld } from './support/remote-world.js';

/**
 * A durable delivery whose consumer has no workflow, with the built server and the
 * simulator as separate processes: GitHub (the simulator) answers 204 and nothing runs, so once
 * ZEKT_NOT_STARTED_AFTER has passed the worker flags it not started. The API record, diagnostics
 * and the console's Delivery Status (list and detail page, in Chromium) all say so, with the
 * workflow to add, and the delivery can still be replayed.
 */
const processes = new ProcessGroup();
let stack: ProcessStack;
let browser: Browser;
let world: RemoteWorld;
let bob: ConsoleUser;

beforeAll(async () => {
  browser = await launchChromium();
  stack = await prepareProcessStack(processes, {
    name: 'console-not-started',
    // A second stands for the default 10 minutes: the real clock of a separate process.
    env: { ZEKT_NOT_STARTED_AFTER: '1s', ZEKT_POLL_INTERVAL_MS: '200' },
  });
  await processes.startZekt(stack.zektUrl, stack.zektEnv);
  world = await setUpRemoteWorld({
    processes,
    sim: stack.sim,
    zektUrl: stack.zektUrl,
    zektEnv: stack.zektEnv,
    workflow: 'deploy.yml',
    durable: true,
  });
  bob = await openConsole(browser, { zektUrl: stack.zektUrl, simUrl: stack.sim.url, login: 'bob' });
}, BROWSER_SETUP_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

describe('a delivery no workflow started for', () => {
  it('is flagged not started, counted in diagnostics, shown in Delivery Status with the fix, and replayable', async () => {
    const run = await json('POST', `${stack.sim.url}/_sim/repos/acme/api/runs`, { workflow: 'deploy.yml' });
    expect(run.status).toBe(201);
    const runId = (run.body as JsonBody).run.id as number;
    const delivery = await eventually(async () => {
      const list = await json(
        'GET',
        `${stack.zektUrl}/api/v1/deliveries?runId=${runId}`,
        undefined,
        world.bob,
      );
      const found = (list.body as JsonBody).deliveries?.[0] as JsonBody | undefined;
      return found?.notStartedAt ? found : undefined;
    }, 20_000);
    expect(delivery).toMatchObject({
      deliveryStatus: 'Dispatched',
      durable: true,
      dispatch: { state: 'accepted' },
      platformResponse: { status: 204 },
    });

    const diagnostics = await json(
      'GET',
      `${stack.zektUrl}/api/connections/${world.subscriptionId}/diagnostics`,
      undefined,
      world.alice,
    );
    expect(diagnostics.status).toBe(200);
    const report = diagnostics.body as JsonBody;
    expect(report.categories.not_started).toBe(1);
    expect(report.recentFailures[0]).toMatchObject({
      deliveryId: delivery.deliveryId,
      category: 'not_started',
      status: 204,
    });
    expect(report.recommendations).toEqual([
      {
        category: 'not_started',
        text: expect.stringContaining(
          `must exist on the default branch of globex/app with \`on: repository_dispatch: types: [${delivery.eventType}]\``,
        ),
      },
    ]);

    const page = bob.page;
    await goTo(page, 'Consumer', 'Delivery Status');
    const row = page
      .locator('table[aria-label="Deliveries"] tbody tr')
      .filter({ hasText: `acme/api #${runId}` });
    await expect
      .poll(() => row.locator('.badge').allTextContents(), { timeout: 20_000 })
      .toEqual(['Dispatched', 'Not started']);
    expect(await row.getByRole('cell').first().textContent()).toContain(
      `must exist on the default branch of globex/app with on: repository_dispatch: types: [${delivery.eventType}]`,
    );

    await row.getByRole('link', { name: `${delivery.eventType}, delivery ${delivery.deliveryId}` }).click();
    const summary = page.getByRole('region', { name: 'Summary' });
    await summary.getByText('Not started', { exact: true }).waitFor();
    expect(await summary.textContent()).toContain('no workflow run started');
    await page.getByRole('button', { name: 'Replay' }).click();
    await page
      .getByRole('dialog', { name: 'Replay this delivery?' })
      .getByRole('button', { name: 'Replay' })
      .click();
    const replay = await eventually(async () => {
      const list = await json(
        'GET',
        `${stack.zektUrl}/api/v1/deliveries?runId=${runId}`,
        undefined,
        world.bob,
      );
      return ((list.body as JsonBody).deliveries as JsonBody[]).find(
        (d) => d.replayOf === delivery.deliveryId,
      );
    });
    expect(replay).toMatchObject({ deliveryStatus: 'Dispatched', isReplay: true });
    expect(bob.problems).toEqual([]);
  });
});
