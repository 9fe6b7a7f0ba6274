import { beforeEach, describe, expect, it } from 'vitest';
import { goTo, seriousViolations } from './support/console-page.js';
import { useConsoleSuite } from './support/console-suite.js';
import type { Harness } from './support/harness.js';
import { SERVICE_CHECK_TITLES } from './support/service-check-titles.js';

/**
 * Settings in the console, in Chromium against the service and the simulator: a member sees the
 * service checks of `zekt doctor` (their own account's installation only), creates an API token
 * with a name and an expiry, sees its secret once, and revokes it.
 */
const suite = useConsoleSuite({ env: { ZEKT_RECONCILE_INTERVAL_MS: '0' } });
let h: Harness;
beforeEach(() => {
  ({ h } = suite);
});

describe('Settings', () => {
  it('shows a member the service checks, scoped to their account', async () => {
    const alice = await suite.open('alice');
    await goTo(alice.page, null, 'Settings');
    const table = alice.page.getByRole('table', { name: 'Service checks' });
    await expect.poll(() => table.getByRole('row').count(), { timeout: 20_000 }).toBe(9);
    const row = (title: string) =>
      table.getByRole('row').filter({ has: alice.page.getByRole('rowheader', { name: title }) });
    for (const title of SERVICE_CHECK_TITLES) {
      expect(await row(title).getByRole('cell').first().textContent(), title).toBe('✔ Passed');
    }
    expect(await row('Installations').getByRole('cell').nth(1).textContent()).toBe('1 installation: acme');
    expect(await alice.page.getByText('No check failed.').count()).toBe(1);
    expect(await seriousViolations(alice.page)).toEqual([]);
  });

  it('creates an API token with a name and an expiry, shows its secret once, and revokes it', async () => {
    const alice = await suite.open('alice');
    await goTo(alice.page, null, 'Settings');
    const form = alice.page.getByRole('form', { name: 'Create an API token' });
    await form.getByRole('button', { name: 'Create token' }).click();
    await alice.page.getByText('Give the token a name: what it is for.').waitFor();

    await form.getByLabel('Name').fill('release pipeline');
    await form.getByLabel('Expires in').selectOption('90');
    await form.getByRole('button', { name: 'Create token' }).click();
    const secret = alice.page.getByLabel('Secret of the new token');
    await secret.waitFor();
    const token = await secret.inputValue();
    expect(token).toMatch(/^zkt_[A-Za-z0-9_-]{43}$/);
    const me = await h.call('GET', '/api/v1/me', { token });
    expect(me.body.user.login).toBe('alice');

    const tokens = alice.page.getByRole('table', { name: 'Your API tokens' });
    const created = tokens.getByRole('row').filter({ hasText: 'release pipeline' });
    await created.waitFor();
    expect(await created.getByRole('cell').nth(3).textContent()).toBe('Active');
    expect(await seriousViolations(alice.page)).toEqual([]);
    await alice.page.getByRole('button', { name: 'Done, I copied it' }).click();
    expect(await alice.page.getByLabel('Secret of the new token').count()).toBe(0);
    // Shown once: the page holds the secret nowhere any more, and the API never answers it again.
    expect(await alice.page.content()).not.toContain(token);

    await created.getByRole('button', { name: 'Revoke release pipeline' }).click();
    const dialog = alice.page.getByRole('dialog', { name: 'Revoke the token release pipeline?' });
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => tokens.getByRole('row').filter({ hasText: 'release pipeline' }).count()).toBe(0);
    expect((await h.call('GET', '/api/v1/me', { token })).status).toBe(401);
    // The token the world's setup made with zekt token create stays, without an expiry.
    expect(await tokens.getByRole('row').filter({ hasText: 'Never' }).count()).toBe(1);
  });
});
