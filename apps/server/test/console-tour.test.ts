import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_SETUP_TIMEOUT_MS, launchChromium } from './support/browser.js';
import {
  type ConsoleUser,
  goTo,
  openConsole,
  seriousViolations,
  signInToGitHub,
} from './support/console-page.js';
import { makeDurable, setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/**
 * A tour of every view of the console over a world with some history (completed, retried, failed,
 * blocked and waiting deliveries, a request to decide, a second service, an alert, a recovery): each view passes
 * axe-core's WCAG 2.1 A/AA checks with no serious or critical violation, and is photographed.
 * `npm run screenshots` writes the pictures to docs/console/ (docs/console.md shows them);
 * otherwise they go to a temporary folder.
 */
// biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
const RUN_NAME = 'zekt ${{ github.event.client_payload.zekt.deliveryId }}';
const root = resolve(import.meta.dirname, '../../..');
const shots = process.env.ZEKT_SCREENSHOTS
  ? resolve(root, process.env.ZEKT_SCREENSHOTS)
  : mkdtempSync(join(tmpdir(), 'zekt-console-'));

let browser: Browser;
let h: Harness;
let world: World;
let alice: ConsoleUser;
let bob: ConsoleUser;
let retriedDelivery: string;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  browser = await launchChromium();
  h = await startHarness({ env: { ZEKT_RETRY_SCHEDULE: '0ms,200ms,200ms,1h' } });
  world = await setUpWorld(h);
  await makeDurable(h, world);
  await seedHistory();
  alice = await openConsole(browser, { zektUrl: h.url, simUrl: h.sim.url, login: 'alice' });
  bob = await openConsole(browser, { zektUrl: h.url, simUrl: h.sim.url, login: 'bob' });
}, BROWSER_SETUP_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function run(workflow: string, version: string) {
  const result = await h.sim.runWorkflow({
    repository: 'acme/api',
    workflow,
    message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { version } },
  });
  return result.run.id;
}

async function settled(
  runId: number,
  done: (d: { deliveryStatus: string; dispatch: { state: string } }) => boolean,
) {
  return eventually(async () => {
    const list = await h.call('GET', `/api/v1/deliveries?runId=${runId}`, { token: world.providerToken });
    const delivery = list.body.deliveries[0];
    return delivery && done(delivery) ? delivery : undefined;
  }, 20_000);
}

/** What the views show: deliveries in every state, a blocked run, a request waiting, a second service. */
async function seedHistory(): Promise<void> {
  const succeeding = h.sim.defineConsumerWorkflow({
    repository: 'globex/app',
    workflow: 'on-deploy.yml',
    types: ['acme-deployed'],
    runName: RUN_NAME,
    conclusion: 'success',
  });
  for (const version of ['1.0.0', '1.1.0', '1.2.0']) {
    await settled(await run('deploy.yml', version), (d) => d.deliveryStatus === 'Completed');
  }
  h.sim.injectFaults({
    method: 'POST',
    path: '/repos/globex/app/dispatches',
    faults: [
      { kind: 'status', status: 503 },
      { kind: 'status', status: 503 },
    ],
  });
  retriedDelivery = (await settled(await run('deploy.yml', '1.3.0'), (d) => d.deliveryStatus === 'Completed'))
    .deliveryId;
  h.sim.removeConsumerWorkflow(succeeding.id);
  h.sim.defineConsumerWorkflow({
    repository: 'globex/app',
    workflow: 'on-deploy.yml',
    types: ['acme-deployed'],
    runName: RUN_NAME,
    conclusion: 'failure',
  });
  await settled(await run('deploy.yml', '1.4.0'), (d) => d.deliveryStatus === 'Failed');
  await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'lint.yml', name: 'Lint' });
  // GitHub keeps answering 503: the delivery waits for its next attempt, an hour out.
  h.sim.injectFaults({
    method: 'POST',
    path: '/repos/globex/app/dispatches',
    faults: [{ kind: 'status', status: 503 }],
    repeat: true,
  });
  await eventually(async () => {
    const runId = await run('deploy.yml', '1.5.0');
    return settled(runId, (d) => d.dispatch.state === 'pending');
  });

  // A second service, a consumer asking for it, and a repository without COMPLETION.
  const ok = async (method: string, path: string, token: string, body?: unknown) => {
    const response = await h.call(method, path, { token, body });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${JSON.stringify(response.body)}`);
    return response.body;
  };
  await ok('PUT', '/api/v1/repositories/acme/web/provider', world.providerToken, { enabled: true });
  await ok('PUT', '/api/v1/repositories/acme/web/workflows/nightly.yml', world.providerToken, {
    whitelisted: true,
  });
  const nightly = await ok('POST', '/api/v1/services', world.providerToken, {
    repository: 'acme/web',
    workflow: 'nightly.yml',
    slug: 'acme-nightly',
    description: 'Nightly builds of acme/web, with the artifact URL in the message',
    tags: ['nightly', 'builds'],
    eventType: 'acme-nightly',
    published: true,
  });
  await h.sim.createInstallation({
    account: { login: 'initech', type: 'Organization' },
    repositories: ['tps'],
    sender: { login: 'carl' },
  });
  await ok('POST', '/api/v1/subscriptions', await h.tokenFor('carl'), {
    serviceId: world.serviceId,
    deliversTo: 'initech/tps',
  });
  const globex = await h.zekt.store.db
    .selectFrom('accounts')
    .select('installation_id')
    .where('login', '=', 'globex')
    .executeTakeFirstOrThrow();
  await h.sim.addRepositories(Number(globex.installation_id), ['ops']);
  expect(nightly.slug).toBe('acme-nightly');
}

/** Checks the view with axe, then photographs it. */
async function visit(page: Page, name: string): Promise<void> {
  await page.locator('html').evaluate((html) => html.ownerDocument.fonts.ready.then(() => true));
  expect(await seriousViolations(page), name).toEqual([]);
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect(statSync(path).size).toBeGreaterThan(5_000);
}

describe('every view of the console', () => {
  it('the login', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page = await context.newPage();
    await page.goto(`${h.url}/`);
    await page.getByRole('link', { name: 'Log in with GitHub' }).waitFor();
    await visit(page, '01-login');
    await context.close();
  });

  it('Provider: Zekt Repos, Zekt Workflows, Services, a service, Subscribers', async () => {
    const page = alice.page;
    await goTo(page, 'Provider', 'Zekt Repos');
    await page.getByRole('switch', { name: 'Provider: acme/web' }).waitFor();
    await visit(page, '02-provider-zekt-repos');
    await goTo(page, 'Provider', 'Zekt Workflows');
    await page.getByRole('cell', { name: '1' }).first().waitFor();
    await visit(page, '03-provider-zekt-workflows');
    await goTo(page, 'Provider', 'Services');
    await page.getByRole('link', { name: 'acme-nightly', exact: true }).waitFor();
    await visit(page, '04-provider-services');
    await page.getByRole('link', { name: 'acme-deploys', exact: true }).click();
    await page.getByRole('heading', { name: 'Edit service' }).waitFor();
    await expect.poll(() => page.getByLabel('Slug').inputValue()).toBe('acme-deploys');
    await visit(page, '05-provider-service-form');
    await goTo(page, 'Provider', 'Subscribers');
    await page.getByRole('button', { name: 'Approve initech (initech/tps)' }).waitFor();
    await visit(page, '06-provider-subscribers');
    expect(alice.problems).toEqual([]);
  });

  it('Provider: Delivery Status with the blocked-events card, and a delivery’s page', async () => {
    const page = alice.page;
    await goTo(page, 'Provider', 'Delivery Status');
    await page.getByText('Not accepted by GitHub yet').waitFor();
    await page.getByRole('region', { name: 'Blocked events of acme' }).getByText('lint.yml').waitFor();
    await visit(page, '07-provider-delivery-status');
    await page.goto(`${h.url}/deliveries/${retriedDelivery}`);
    await expect
      .poll(() => page.getByRole('table', { name: 'Attempts' }).locator('tbody tr').count())
      .toBe(3);
    await page.getByText('"version": "1.3.0"').waitFor();
    await visit(page, '08-delivery-detail');
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('dialog', { name: 'Replay this delivery?' }).waitFor();
    await visit(page, '09-delivery-replay-dialog');
    await page.keyboard.press('Escape');
    expect(alice.problems).toEqual([]);
  });

  it('Consumer: Zekt Repos with the COMPLETION dialog, Zekt Subscriptions, Delivery Status', async () => {
    const page = bob.page;
    await goTo(page, 'Consumer', 'Zekt Repos');
    const ops = page.getByRole('switch', { name: 'COMPLETION: globex/ops' });
    await ops.waitFor();
    await visit(page, '10-consumer-zekt-repos');
    await ops.click();
    await page.getByRole('dialog', { name: 'Enable completion tracking for globex/ops?' }).waitFor();
    await visit(page, '11-consumer-completion-dialog');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await goTo(page, 'Consumer', 'Zekt Subscriptions');
    await page.getByRole('switch', { name: 'Durable Delivery: acme-deploys to globex/app' }).waitFor();
    await visit(page, '12-consumer-zekt-subscriptions');
    await goTo(page, 'Consumer', 'Delivery Status');
    await page.getByRole('table', { name: 'Deliveries' }).getByText('Failed').waitFor();
    await visit(page, '13-consumer-delivery-status');
    expect(bob.problems).toEqual([]);
  });

  it('Directory with its request dialog, My Connections with diagnostics, Usage', async () => {
    const page = bob.page;
    await goTo(page, null, 'Directory');
    await page.getByRole('heading', { name: 'acme-nightly' }).waitFor();
    await visit(page, '14-directory');
    await page.getByRole('button', { name: 'Request access to acme-nightly' }).click();
    await page
      .getByRole('dialog', { name: 'Request access to acme-nightly' })
      .getByLabel('Delivers to')
      .waitFor();
    await visit(page, '15-directory-request-dialog');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await goTo(page, null, 'My Connections');
    const card = page.getByRole('list', { name: 'Connections' }).getByRole('listitem').first();
    await card.getByRole('img', { name: 'Success rate per day, last 14 days' }).waitFor();
    await card.getByRole('button', { name: /^Diagnostics/ }).click();
    await card.getByText('Recommendations').waitFor();
    await visit(page, '16-my-connections');
    await goTo(page, null, 'Usage');
    await page.getByRole('table', { name: 'Usage of globex' }).waitFor();
    await visit(page, '17-usage');
    expect(bob.problems).toEqual([]);
  });

  it('Alerts, Audit, and Recover on a connection with its preview and progress', async () => {
    const page = bob.page;
    // The connection's failed and waiting deliveries turned it Critical: an alert for the consumer.
    await h.zekt.alerts.checkHealth();
    await goTo(page, null, 'Alerts');
    await page.getByRole('table', { name: 'Alerts' }).getByText('Connection turned Critical').waitFor();
    await visit(page, '21-alerts');
    await goTo(page, null, 'Audit');
    await page.getByRole('table', { name: 'Audit trail' }).getByText('Durable Delivery switch').waitFor();
    await visit(page, '22-audit');
    await goTo(page, null, 'My Connections');
    const card = page.getByRole('list', { name: 'Connections' }).getByRole('listitem').first();
    await card.getByRole('button', { name: 'Recover deliveries of acme-deploys to globex/app' }).click();
    const dialog = page.getByRole('dialog', { name: 'Recover deliveries of acme-deploys to globex/app' });
    await dialog.getByText('1 delivery would be replayed', { exact: true }).waitFor();
    await visit(page, '23-recover-dialog');
    await dialog.getByRole('button', { name: 'Recover 1 delivery' }).click();
    // The service's worker runs it: the dialog follows it to its end.
    await dialog.getByText('Done: 1 of 1 handled', { exact: true }).waitFor();
    await visit(page, '24-recover-progress');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await goTo(page, null, 'Audit');
    await page.getByRole('table', { name: 'Audit trail' }).getByText('Recovery started').waitFor();
    await goTo(page, null, 'Settings');
    await page.getByRole('table', { name: 'Service checks' }).getByText('Webhook deliveries').waitFor();
    await page.getByRole('table', { name: 'Your API tokens' }).waitFor();
    await visit(page, '25-settings');
    expect(bob.problems).toEqual([]);
  });

  it('a user without an account, and a 390 px screen', async () => {
    const carol = await openConsole(browser, { zektUrl: h.url, simUrl: h.sim.url, login: 'carol' });
    await carol.page.getByRole('heading', { name: 'Install the Zekt App' }).waitFor();
    await visit(carol.page, '18-no-account');
    await carol.context.close();

    await signInToGitHub(h.sim.url, 'bob');
    const phone = await openConsole(browser, {
      zektUrl: h.url,
      simUrl: h.sim.url,
      login: 'bob',
      viewport: { width: 390, height: 844 },
    });
    // The first page is My Connections; the navigation hides behind Menu.
    await phone.page.getByRole('list', { name: 'Connections' }).waitFor();
    await visit(phone.page, '19-mobile-my-connections');
    await phone.page.getByRole('button', { name: 'Menu' }).click();
    await visit(phone.page, '20-mobile-menu');
    expect(phone.problems).toEqual([]);
    await phone.context.close();
  });
});
