import { beforeEach, describe, expect, it } from 'vitest';
import { goTo, seriousViolations } from './support/console-page.js';
import { useConsoleSuite } from './support/console-suite.js';
import { runWhileConsumerRefuses, type World } from './support/demo-world.js';
import { eventually, type Harness } from './support/harness.js';

/**
 * The Alerts view: a connection that turned Critical is listed for its consumer, with
 * where the alert went (here nowhere: no alert URL is configured, and the view says so); the
 * provider's account sees no alert of the consumer's.
 */
const suite = useConsoleSuite({ env: { ZEKT_RETRY_SCHEDULE: '0s', ZEKT_RECONCILE_INTERVAL_MS: '0' } });
let h: Harness;
let world: World;
beforeEach(() => {
  ({ h, world } = suite);
});
const open = suite.open;

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
