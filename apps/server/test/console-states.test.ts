import type { Browser } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { type ConsoleUser, goTo, signInToGitHub } from './support/console-page.js';
import { useConsoleSuite } from './support/console-suite.js';
import type { World } from './support/demo-world.js';
import { eventually, type Harness } from './support/harness.js';

/**
 * The console when things are not simple: forms that refuse bad input before sending and put the
 * API's problem next to the field, double clicks that send once, switches that go back and say why
 * when their request fails, an expired session, a user without an account, a failed load with
 * Retry, the keyboard, a 390 px screen, filters in the URL.
 */
const suite = useConsoleSuite();
let h: Harness;
let world: World;
let browser: Browser;
beforeEach(() => {
  ({ h, world, browser } = suite);
});
const open = suite.open;

const sent = (user: ConsoleUser, request: string) => user.requests.filter((r) => r === request).length;

describe('forms', () => {
  it('check input before sending it, and put the API’s problem next to the field it is about', async () => {
    const alice = await open('alice');
    const page = alice.page;
    await page.goto(`${h.url}/provider/services/new?repository=acme/api&workflow=deploy.yml`);
    const form = page.getByRole('form', { name: 'Service' });
    await form.getByLabel('Slug').fill('Bad Slug');
    await form.getByLabel('Event type').fill('no spaces allowed');
    await form.getByRole('button', { name: 'Create service' }).click();
    await expect.poll(() => form.getByLabel('Slug').getAttribute('aria-invalid')).toBe('true');
    expect(await form.getByRole('alert').allTextContents()).toEqual([
      'Use 1–63 lower-case letters, digits or dashes, starting with a letter or digit.',
      'Use 1–100 letters, digits, dots, underscores, colons or dashes.',
    ]);
    expect(sent(alice, 'POST /api/v1/services')).toBe(0);

    // Valid to the form, refused by the API: the slug is taken.
    alice.expect(/^409 \/api\/v1\/services$/);
    await form.getByLabel('Slug').fill('acme-deploys');
    await form.getByLabel('Event type').fill('');
    await form.getByRole('button', { name: 'Create service' }).click();
    const slugError = form.getByLabel('Slug');
    await expect.poll(() => slugError.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await slugError.getAttribute('aria-describedby'))!.split(' ');
    expect(await page.locator(`[id="${describedBy.at(-1)}"]`).textContent()).toBe(
      'this account already has a service called acme-deploys',
    );
    expect(sent(alice, 'POST /api/v1/services')).toBe(1);
    const services = await h.call('GET', '/api/v1/services', { token: world.providerToken });
    expect(services.body.services).toHaveLength(1);
  });
});

describe('double clicks', () => {
  it('send one approval and one switch change', async () => {
    await h.sim.createInstallation({
      account: { login: 'initech', type: 'Organization' },
      repositories: ['tps'],
      sender: { login: 'carl' },
    });
    const carl = await h.tokenFor('carl');
    const request = await h.call('POST', '/api/v1/subscriptions', {
      token: carl,
      body: { serviceId: world.serviceId, deliversTo: 'initech/tps' },
    });
    expect(request.status).toBe(201);

    const alice = await open('alice');
    const page = alice.page;
    await goTo(page, 'Provider', 'Subscribers');
    await page.getByRole('button', { name: 'Approve initech (initech/tps)' }).dblclick();
    const active = page.getByRole('table', { name: 'Active subscribers' });
    await expect.poll(() => active.getByRole('row').filter({ hasText: 'initech/tps' }).count()).toBe(1);
    expect(sent(alice, `POST /api/v1/subscriptions/${request.body.id}/approve`)).toBe(1);

    await goTo(page, 'Provider', 'Zekt Repos');
    const web = page.getByRole('switch', { name: 'Provider: acme/web' });
    await web.dblclick();
    await expect.poll(() => web.textContent()).toBe('Enabled — webhook placed');
    expect(sent(alice, 'PUT /api/v1/repositories/acme/web/provider')).toBe(1);
    const repositories = await h.call('GET', '/api/v1/accounts/acme/repositories', {
      token: world.providerToken,
    });
    expect(repositories.body.repositories[1]).toMatchObject({
      fullName: 'acme/web',
      provider: { enabled: true },
    });
  });
});

describe('switches', () => {
  it('go back and say why when the API refuses: Durable Delivery while COMPLETION is off', async () => {
    const bob = await open('bob');
    bob.expect(/^409 \/api\/v1\/subscriptions\/sub_/);
    const page = bob.page;
    await goTo(page, 'Consumer', 'Zekt Subscriptions');
    const durable = page.getByRole('switch', { name: 'Durable Delivery: acme-deploys to globex/app' });
    await durable.click();
    const message = page.getByRole('alert');
    await message.waitFor();
    expect(await message.textContent()).toContain(
      'turn on completion tracking (COMPLETION) for globex/app first',
    );
    expect(await durable.getAttribute('aria-checked')).toBe('false');
    expect(await durable.getAttribute('aria-describedby')).toBe(await message.getAttribute('id'));
    const subscription = await h.call('GET', `/api/v1/subscriptions/${world.subscriptionId}`, {
      token: world.consumerToken,
    });
    expect(subscription.body.durable).toBe(false);
  });

  it('go back and say why when GitHub refuses: placing a webhook without the permission', async () => {
    h.sim.injectFaults({
      method: 'POST',
      path: '/repos/acme/web/hooks',
      faults: [{ kind: 'status', status: 403, body: { message: 'Resource not accessible by integration' } }],
    });
    const alice = await open('alice');
    alice.expect(/^502 \/api\/v1\/repositories\/acme\/web\/provider$/);
    const page = alice.page;
    await goTo(page, 'Provider', 'Zekt Repos');
    const web = page.getByRole('switch', { name: 'Provider: acme/web' });
    await web.click();
    const message = page.getByRole('alert');
    await message.waitFor();
    expect(await message.textContent()).toMatch(
      /Resource not accessible by integration.*Webhooks: read and write/,
    );
    expect(await web.getAttribute('aria-checked')).toBe('false');
    expect(await web.textContent()).toBe('Off');
  });
});

describe('sessions and accounts', () => {
  it('send a user whose session expired to the login and back to the same page', async () => {
    const alice = await open('alice');
    alice.expect(/^401 \/api\//);
    const page = alice.page;
    await page.goto(`${h.url}/provider/deliveries?status=Completed`);
    await page.getByRole('heading', { name: 'Delivery Status' }).waitFor();
    const logins = () => sent(alice, 'GET /auth/callback');
    const before = logins();
    // The session ends (12 hours passed, or the user logged out in another tab).
    await h.zekt.store.db.deleteFrom('sessions').execute();
    // The next live refresh finds it gone: through GitHub's login (which knows alice) and back.
    await eventually(() => (logins() > before ? true : undefined), 15_000);
    await page.waitForURL(`${h.url}/provider/deliveries?status=Completed`);
    await page.getByRole('list', { name: 'Active filters' }).waitFor();
    expect(await page.locator('#user').textContent()).toBe('alice');
    const sessions = await h.zekt.store.db.selectFrom('sessions').selectAll().execute();
    expect(sessions).toHaveLength(1);
  });

  it('tell a user without an account how to install the App, and welcome them back once they have', async () => {
    const carol = await open('carol');
    const page = carol.page;
    await page.getByRole('heading', { name: 'Install the Zekt App' }).waitFor();
    const link = page.getByRole('link', { name: 'Install the Zekt App on GitHub' });
    expect(await link.getAttribute('href')).toBe(`${h.sim.url}/apps/${h.sim.app.slug}/installations/new`);
    expect(await page.locator('#user').textContent()).toBe('carol');
    // GitHub's install page, then back to Zekt: the account is there, the installer its member.
    await link.click();
    await page.getByLabel('Repositories').fill('site');
    await page.getByRole('button', { name: 'Install' }).click();
    await page.getByRole('link', { name: `Return to ${h.sim.app.name}` }).click();
    await page.waitForURL(`${h.url}/`);
    await page.getByRole('heading', { name: 'My Connections' }).waitFor();
    expect(await page.locator('.who').textContent()).toContain('carol');
    await goTo(page, 'Consumer', 'Zekt Repos');
    await page.getByRole('switch', { name: 'COMPLETION: carol/site' }).waitFor();
    const me = await h.call('GET', '/api/v1/me', { token: await h.tokenFor('carol') });
    expect(me.body.accounts.map((a: { login: string }) => a.login)).toEqual(['carol']);
  });

  it('show a visitor the login first, then the page they asked for', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signInToGitHub(h.sim.url, null);
    await page.goto(`${h.url}/usage`);
    await page.getByRole('link', { name: 'Log in with GitHub' }).click();
    await page.waitForURL(/\/login\/oauth\/authorize/);
    // Nobody is signed in to the simulated GitHub: its sign-in page lists the users.
    await page.getByRole('link', { name: 'alice', exact: true }).click();
    await page.waitForURL(`${h.url}/usage`);
    await page.getByRole('table', { name: 'Usage of acme' }).waitFor();
    await context.close();
  });
});

describe('views', () => {
  it('say what failed when a load fails, and load again on Retry', async () => {
    const bob = await open('bob');
    bob.expect(/^404 \/api\/v1\/deliveries\/delivery-/);
    const page = bob.page;
    const missing = 'delivery-00000000-0000-7000-8000-000000000000';
    await page.goto(`${h.url}/deliveries/${missing}`);
    const alert = page.getByRole('alert').filter({ hasText: 'Could not load the delivery' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain(`no delivery ${missing} of your connections`);
    expect(await alert.textContent()).toContain('delivery_not_found');
    const before = sent(bob, `GET /api/v1/deliveries/${missing}`);
    await alert.getByRole('button', { name: 'Retry' }).click();
    await eventually(() => (sent(bob, `GET /api/v1/deliveries/${missing}`) > before ? true : undefined));
  });

  it('say what to do next when empty', async () => {
    await h.sim.createInstallation({
      account: { login: 'initech', type: 'Organization' },
      repositories: ['tps'],
      sender: { login: 'carl' },
    });
    const carl = await open('carl');
    const page = carl.page;
    await goTo(page, 'Consumer', 'Zekt Subscriptions');
    await page.getByText('You have no subscriptions yet.').waitFor();
    await page.getByRole('main').getByRole('link', { name: 'Directory' }).click();
    await page.getByRole('heading', { name: 'Directory' }).waitFor();
    await goTo(page, 'Provider', 'Services');
    await page.getByText('No services yet.').waitFor();
    await goTo(page, 'Consumer', 'Delivery Status');
    await page.getByText('No deliveries yet.').waitFor();
  });

  it('work with the keyboard: the COMPLETION switch opens its dialog, Escape closes it and gives the focus back', async () => {
    const bob = await open('bob');
    const page = bob.page;
    await goTo(page, 'Consumer', 'Zekt Repos');
    const completion = page.getByRole('switch', { name: 'COMPLETION: globex/app' });
    await completion.focus();
    await page.keyboard.press('Space');
    const dialog = page.getByRole('dialog', { name: 'Enable completion tracking for globex/app?' });
    await dialog.waitFor();
    expect(await dialog.evaluate((d) => d.contains(d.ownerDocument.activeElement))).toBe(true);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await completion.evaluate((s) => s === s.ownerDocument.activeElement)).toBe(true);
    expect(await completion.getAttribute('aria-checked')).toBe('false');
    // Enter on the focused switch, then Tab to "Enable Tracking" and Enter: tracking on.
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Enable Tracking' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => completion.getAttribute('aria-checked')).toBe('true');
    const repositories = await h.call('GET', '/api/v1/accounts/globex/repositories', {
      token: world.consumerToken,
    });
    expect(repositories.body.repositories[0].completionTracking.enabled).toBe(true);
  });

  it('fit a 390 px screen: the navigation folds behind Menu, nothing scrolls sideways', async () => {
    const bob = await open('bob', { width: 390, height: 844 });
    const page = bob.page;
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.isVisible()).toBe(false);
    const menu = page.getByRole('button', { name: 'Menu' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    for (const [section, label] of [
      ['Consumer', 'Zekt Subscriptions'],
      [null, 'Directory'],
      ['Consumer', 'Delivery Status'],
      [null, 'My Connections'],
    ] as const) {
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await goTo(page, section, label);
      expect(await nav.isVisible()).toBe(false);
      const overflow = await page.locator('html').evaluate((html) => html.scrollWidth - html.clientWidth);
      expect({ label, overflow }).toEqual({ label, overflow: 0 });
    }
  });

  it('keep filters in the URL as removable chips, and through a reload', async () => {
    const alice = await open('alice');
    const page = alice.page;
    await goTo(page, 'Provider', 'Delivery Status');
    await page.getByLabel('Status', { exact: true }).selectOption('Failed');
    // The filter replaces the history entry (no navigation event): read the URL.
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBe('Failed');
    const chips = page.getByRole('list', { name: 'Active filters' });
    expect(await chips.textContent()).toContain('Status: Failed');
    await page.getByText('No delivery matches these filters.').waitFor();
    await page.reload();
    expect(await page.getByRole('list', { name: 'Active filters' }).textContent()).toContain(
      'Status: Failed',
    );
    expect(await page.getByLabel('Status', { exact: true }).inputValue()).toBe('Failed');
    await page.getByRole('button', { name: 'Remove filter Status: Failed' }).click();
    await expect.poll(() => new URL(page.url()).search).toBe('');
    expect(await page.getByRole('list', { name: 'Active filters' }).count()).toBe(0);
  });

  it('page back with Load older, and keep the older pages through a live refresh', async () => {
    for (let i = 0; i < 52; i++) await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    await eventually(async () => {
      const list = await h.call('GET', '/api/v1/deliveries?limit=100', { token: world.providerToken });
      return list.body.deliveries.length === 52 ? true : undefined;
    }, 20_000);
    const alice = await open('alice');
    const page = alice.page;
    await goTo(page, 'Provider', 'Delivery Status');
    const rows = page.getByRole('table', { name: 'Deliveries' }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(50);
    await page.getByRole('button', { name: 'Load older' }).click();
    await expect.poll(() => rows.count()).toBe(52);
    expect(await page.getByRole('button', { name: 'Load older' }).count()).toBe(0);
    const updated = await page.locator('.updated').textContent();
    await expect.poll(() => page.locator('.updated').textContent(), { timeout: 15_000 }).not.toBe(updated);
    expect(await rows.count()).toBe(52);
  });
});
