import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BROWSER_SETUP_TIMEOUT_MS, launchChromium } from '../src/test-support/browser.js';
import { type ConsoleUser, goTo, openConsole, seriousViolations } from '../src/test-support/console-page.js';
import { runWhileConsumerRefuses, setUpWorld, type World } from '../src/test-support/demo-world.js';
import { eventually, type Harness, startHarness } from '../src/test-support/harness.js';

/**
 * The Alerts view (issue 12 §5): a connection that turned Critical is listed for its consumer, with
 * where the alert went (here nowhere: no alert URL is configured, and the view says so); the
 * provider's account sees no alert of the consumer's.
 */
let browser: Browser;
let h: Harness;
let world: World;
const users: ConsoleUser[] = [];

beforeAll(async () => {
  browser = await launchChromium();
}, BROWSER_SETUP_TIMEOUT_MS);
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  h = await startHarness({ env: { ZEKT_RETRY_SCHEDULE: '0s', ZEKT_RECONCILE_INTERVAL_MS: '0' } });
  world = await setUpWorld(h);
});
afterEach(async () => {
  for (const user of users.splice(0)) {
    expect(user.problems, `${user.login}'s page`).toEqual([]);
    await user.context.close();
  }
  await h.close();
});

async function open(login: string): Promise<ConsoleUser> {
  const user = await openConsole(browser, { zektUrl: h.url, simUrl: h.sim.url, login });
  users.push(user);
  return user;
}

describe('Alerts', () => {
  it('lists a connection that turned Critical for its consumer, says it was not sent, and shows the provider none', async () => {
    // The consumer's repository refuses every dispatch: the connection's only delivery fails.
    await runWhileConsumerRefuses(h, 404);
    await eventually(async () => {
      const page = await h.call('GET', '/api/v1/deliveries', { token: world.consumerToken });
      return page.body.deliveries?.[0]?.deliveryStatus === 'Failed' ? true : undefined;
    });
    await h.zekt.alerts.checkHealth();
    await eventually(async () => {
      const page = await h.call('GET', '/api/v1/alerts', { token: world.consumerToken });
      return page.body.alerts.length === 1 ? true : undefined;
    });

    const bob = await open('bob');
    await goTo(bob.page, null, 'Alerts');
    const table = bob.page.getByRole('table', { name: 'Alerts' });
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    const row = table.getByRole('row').nth(1);
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('Connection turned Critical');
    expect(await row.getByRole('cell').nth(2).textContent()).toContain('Healthy → Critical');
    expect(await row.getByRole('cell').nth(3).textContent()).toBe('globex');
    expect(await row.getByRole('cell').nth(4).textContent()).toContain('Not sent: no alert URL');
    expect(await seriousViolations(bob.page)).toEqual([]);

    const alice = await open('alice');
    await goTo(alice.page, null, 'Alerts');
    await expect.poll(() => alice.page.getByText('No alerts', { exact: true }).count()).toBe(1);
    expect(await alice.page.getByRole('table', { name: 'Alerts' }).count()).toBe(0);
  });
});
