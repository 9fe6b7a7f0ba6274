import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_SETUP_TIMEOUT_MS, launchChromium } from './support/browser.js';
import { type ConsoleUser, goTo, openConsole } from './support/console-page.js';
import { eventually } from './support/harness.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { type JsonBody, json, ProcessGroup } from './support/processes.js';

/**
 * The product's journey through the console only, as two people would take it, against the built
 * server and the GitHub simulator as separate processes: alice (acme) enables a repository,
 * whitelists a workflow and publishes a service; bob (globex) finds it in the Directory and asks
 * for access; alice approves; bob follows the seed's "Enabling durable delivery" steps 1–4; a run is
 * delivered and Delivery Status shows it Completed, with its Confirmed and Completed times and retry
 * 0; one that GitHub accepted on its third attempt shows retry 2; a replay is confirmed first; alice
 * revokes. What the console shows is checked against the API after each step.
 *
 * The steps share one world and run in order; what GitHub does (a workflow runs, a dispatch fails)
 * is played by the simulator's control API, never by Zekt's.
 */
// biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
const RUN_NAME = 'zekt ${{ github.event.client_payload.zekt.deliveryId }}';

const processes = new ProcessGroup();
let stack: ProcessStack;
let browser: Browser;
let alice: ConsoleUser;
let bob: ConsoleUser;
let aliceToken: string;
let bobToken: string;
let serviceId: string;
let subscriptionId: string;
let completedDelivery: JsonBody;

const sim = () => stack.sim.url;
const zekt = () => stack.zektUrl;
const api = async (path: string, token: string) => {
  const response = await json('GET', zekt() + path, undefined, token);
  expect(response.status, `GET ${path}`).toBe(200);
  return response.body as JsonBody;
};

beforeAll(async () => {
  browser = await launchChromium();
  stack = await prepareProcessStack(processes, {
    name: 'console-journey',
    env: { ZEKT_RETRY_SCHEDULE: '0ms,300ms,300ms,300ms', ZEKT_POLL_INTERVAL_MS: '200' },
  });
  await processes.startZekt(zekt(), stack.zektEnv);
  for (const [account, repositories, sender] of [
    ['acme', ['api', 'web'], 'alice'],
    ['globex', ['app'], 'bob'],
  ] as const) {
    const installed = await json('POST', `${sim()}/_sim/installations`, {
      account: { login: account, type: 'Organization' },
      repositories,
      sender: { login: sender },
    });
    expect(installed.status).toBe(201);
  }
  const tokenOf = async (login: string) =>
    (await processes.run(['token', 'create', '--login', login], stack.zektEnv)).trim().split('\n').pop()!;
  aliceToken = await tokenOf('alice');
  bobToken = await tokenOf('bob');
  alice = await openConsole(browser, { zektUrl: zekt(), simUrl: sim(), login: 'alice' });
  bob = await openConsole(browser, { zektUrl: zekt(), simUrl: sim(), login: 'bob' });
}, BROWSER_SETUP_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

async function providerRun(workflow: string, message?: unknown): Promise<JsonBody> {
  const run = await json('POST', `${sim()}/_sim/repos/acme/api/runs`, {
    workflow,
    ...(message === undefined
      ? {}
      : { message: { zektUrl: zekt(), eventType: 'acme-deployed', payload: message } }),
  });
  expect(run.status).toBe(201);
  return run.body as JsonBody;
}

/** The row of Delivery Status for a provider run. */
function deliveryRow(page: Page, runId: number) {
  return page.locator('table[aria-label="Deliveries"] tbody tr').filter({ hasText: `acme/api #${runId}` });
}

describe('the console, end to end', () => {
  it('alice enables a repository, whitelists a blocked workflow and publishes it as a service', async () => {
    const page = alice.page;
    await goTo(page, 'Provider', 'Zekt Repos');
    const provider = page.getByRole('switch', { name: 'Provider: acme/api' });
    expect(await provider.getAttribute('aria-checked')).toBe('false');
    await provider.click();
    await expect.poll(() => provider.textContent()).toBe('Enabled — webhook placed');
    expect(await provider.getAttribute('aria-checked')).toBe('true');
    const repositories = await api('/api/v1/accounts/acme/repositories', aliceToken);
    expect(repositories.repositories).toContainEqual(
      expect.objectContaining({ fullName: 'acme/api', provider: { enabled: true } }),
    );

    // deploy.yml runs before anyone whitelisted it: Zekt blocks the run and counts it.
    await providerRun('deploy.yml');
    await page.getByRole('link', { name: 'Workflows of acme/api' }).click();
    const row = page
      .locator('table[aria-label="Workflows of acme/api"] tbody tr')
      .filter({ hasText: 'deploy.yml' });
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    expect(await row.locator('td.number').textContent()).toBe('1');
    await row.getByRole('switch', { name: 'Whitelist deploy.yml' }).click();
    await expect.poll(() => row.getByRole('switch').getAttribute('aria-checked')).toBe('true');
    // The switch shows its new position while it saves: the API is read once it is no longer busy.
    await expect.poll(() => row.getByRole('switch').getAttribute('aria-busy')).toBe('false');
    const workflows = await api('/api/v1/repositories/acme/api/workflows', aliceToken);
    expect(workflows.workflows).toEqual([
      expect.objectContaining({ file: 'deploy.yml', whitelisted: true, blockedCount: 1 }),
    ]);

    await row.getByRole('link', { name: 'Create service from deploy.yml' }).click();
    await page.getByRole('heading', { name: 'New service' }).waitFor();
    const form = page.getByRole('form', { name: 'Service' });
    await expect.poll(() => form.getByLabel('Workflow').inputValue()).toBe('deploy.yml');
    await form.getByLabel('Slug').fill('acme-deploys');
    await form.getByLabel('Description').fill('Deployments of acme/api to production');
    await form.getByLabel('Tags').fill('deploy, production');
    await form.getByLabel('Event type').fill('acme-deployed');
    await form.getByLabel('Publish in the Directory').check();
    await form.getByRole('button', { name: 'Create service' }).click();
    await page.getByRole('status').filter({ hasText: 'Service acme-deploys saved.' }).waitFor();
    const services = await api('/api/v1/services', aliceToken);
    expect(services.services).toEqual([
      expect.objectContaining({
        slug: 'acme-deploys',
        repository: 'acme/api',
        workflow: 'deploy.yml',
        eventType: 'acme-deployed',
        tags: ['deploy', 'production'],
        visibility: 'public',
        published: true,
      }),
    ]);
    serviceId = services.services[0].id;
    expect(alice.problems).toEqual([]);
  });

  it('bob finds the service in the Directory and requests access for globex/app', async () => {
    const page = bob.page;
    await goTo(page, null, 'Directory');
    await page.getByRole('searchbox', { name: 'Search' }).fill('production');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/q=production/);
    const card = page
      .getByRole('list', { name: 'Services' })
      .getByRole('listitem')
      .filter({ hasText: 'acme-deploys' });
    await expect.poll(() => card.count()).toBe(1);
    await card.getByRole('button', { name: 'Request access to acme-deploys' }).click();
    const dialog = page.getByRole('dialog', { name: 'Request access to acme-deploys' });
    await dialog.getByLabel('Delivers to').selectOption('globex/app');
    await dialog.getByRole('button', { name: 'Request access' }).click();
    await page.getByRole('status').filter({ hasText: 'Access to acme-deploys requested' }).waitFor();
    const subscriptions = await api('/api/v1/subscriptions', bobToken);
    expect(subscriptions.subscriptions).toEqual([
      expect.objectContaining({
        status: 'requested',
        deliversTo: 'globex/app',
        service: expect.objectContaining({ id: serviceId }),
      }),
    ]);
    subscriptionId = subscriptions.subscriptions[0].id;
    expect(bob.problems).toEqual([]);
  });

  it('alice approves the request', async () => {
    const page = alice.page;
    await goTo(page, 'Provider', 'Subscribers');
    const requests = page.getByRole('table', { name: 'Requests' });
    await requests.getByRole('button', { name: 'Approve globex (globex/app)' }).click();
    const active = page.getByRole('table', { name: 'Active subscribers' });
    await expect.poll(() => active.getByRole('row').filter({ hasText: 'globex/app' }).count()).toBe(1);
    expect((await api(`/api/v1/subscriptions/${subscriptionId}`, aliceToken)).status).toBe('approved');
    expect(alice.problems).toEqual([]);
  });

  it("bob enables durable delivery: the seed's steps 1–4", async () => {
    const page = bob.page;
    // 1. Consumer › Zekt Repos: the COMPLETION switch of the consumer repository.
    await goTo(page, 'Consumer', 'Zekt Repos');
    const completion = page.getByRole('switch', { name: 'COMPLETION: globex/app' });
    expect(await completion.getAttribute('aria-checked')).toBe('false');
    await completion.click();
    // 2. The modal says a webhook will be placed and that it counts against the API quota.
    const dialog = page.getByRole('dialog', { name: 'Enable completion tracking for globex/app?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toMatch(/place a webhook in globex\/app/);
    expect(await dialog.textContent()).toMatch(/count against globex’s GitHub API quota/);
    await dialog.getByRole('button', { name: 'Enable Tracking' }).click();
    // 3. Back at the list once the webhook exists; the repository shows as enabled.
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => completion.getAttribute('aria-checked')).toBe('true');
    expect(await completion.textContent()).toBe('Enabled for completion tracking');
    const repositories = await api('/api/v1/accounts/globex/repositories', bobToken);
    expect(repositories.repositories[0]).toMatchObject({
      fullName: 'globex/app',
      completionTracking: { enabled: true },
    });
    // 4. Consumer › Zekt Subscriptions: Durable Delivery for the service delivering to globex/app.
    await page.getByRole('link', { name: 'Zekt Subscriptions', exact: true }).first().click();
    const row = page
      .getByRole('table', { name: 'Subscriptions' })
      .getByRole('row')
      .filter({ hasText: 'acme-deploys' });
    expect(await row.getByRole('cell').nth(0).textContent()).toBe('globex/app');
    expect(await row.getByRole('cell').nth(2).textContent()).toBe('Approved');
    const durable = row.getByRole('switch', { name: 'Durable Delivery: acme-deploys to globex/app' });
    await durable.click();
    await expect.poll(() => durable.getAttribute('aria-checked')).toBe('true');
    await expect.poll(() => durable.getAttribute('aria-busy')).toBe('false');
    expect((await api(`/api/v1/subscriptions/${subscriptionId}`, bobToken)).durable).toBe(true);
    expect(bob.problems).toEqual([]);
  });

  it('a provider run is delivered; Delivery Status shows it Completed with its times and retry 0, live', async () => {
    const consumer = await json('POST', `${sim()}/_sim/consumer-workflows`, {
      repository: 'globex/app',
      workflow: 'on-deploy.yml',
      types: ['acme-deployed'],
      runName: RUN_NAME,
      conclusion: 'success',
    });
    expect(consumer.status).toBeLessThan(300);
    const page = alice.page;
    await goTo(page, 'Provider', 'Delivery Status');
    const { run } = await providerRun('deploy.yml', { version: '1.2.3' });
    // No reload: the list updates itself.
    const row = deliveryRow(page, run.id);
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 20_000 }).toBe('Completed');
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells[1]).toBe('acme-deployed');
    expect(cells[3]).toBe('globex/app');
    expect(cells[5]).not.toBe('—');
    expect(cells[6]).not.toBe('—');
    expect(cells[7]).toBe('0');
    const list = await api(`/api/v1/deliveries?runId=${run.id}`, aliceToken);
    completedDelivery = list.deliveries[0];
    expect(completedDelivery).toMatchObject({ deliveryStatus: 'Completed', retryNumber: 0, durable: true });
    expect(completedDelivery.confirmedAt).not.toBeNull();
    expect(completedDelivery.completedAt).not.toBeNull();
    expect(await row.getByRole('cell').nth(5).locator('time').getAttribute('datetime')).toBe(
      completedDelivery.confirmedAt,
    );
    expect(await row.getByRole('cell').nth(6).locator('time').getAttribute('datetime')).toBe(
      completedDelivery.completedAt,
    );
    expect(alice.problems).toEqual([]);
  });

  it('a delivery GitHub accepted on its third attempt shows retry 2, and its attempts on its own page', async () => {
    const fault = await json('POST', `${sim()}/_sim/faults`, {
      method: 'POST',
      path: '/repos/globex/app/dispatches',
      faults: [
        { kind: 'status', status: 503 },
        { kind: 'status', status: 503 },
      ],
    });
    expect(fault.status).toBeLessThan(300);
    const page = alice.page;
    const { run } = await providerRun('deploy.yml', { version: '1.2.4' });
    const row = deliveryRow(page, run.id);
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 20_000 }).toBe('Completed');
    expect(await row.getByRole('cell').nth(7).textContent()).toBe('2');
    const record = (await api(`/api/v1/deliveries?runId=${run.id}`, aliceToken)).deliveries[0];
    expect(record.retryNumber).toBe(2);

    await row.getByRole('link', { name: `acme-deployed, delivery ${record.deliveryId}` }).click();
    await page.waitForURL(`${zekt()}/deliveries/${record.deliveryId}`);
    const attempts = page.getByRole('table', { name: 'Attempts' }).locator('tbody tr');
    await expect.poll(() => attempts.count()).toBe(3);
    const summary = await attempts.evaluateAll((rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].slice(2, 5).map((c) => c.textContent)),
    );
    expect(summary).toEqual([
      ['failed', '503', 'service_unavailable'],
      ['failed', '503', 'service_unavailable'],
      ['accepted', '204', '—'],
    ]);
    const timeline = await page.locator('ol.timeline > li strong').allTextContents();
    expect(timeline).toEqual(['Created', 'Attempt 1', 'Attempt 2', 'Attempt 3', 'Confirmed', 'Completed']);
    expect(await page.locator('pre.json').first().textContent()).toContain('"version": "1.2.4"');
    // A deep link survives a reload.
    await page.reload();
    await expect
      .poll(() => page.getByRole('table', { name: 'Attempts' }).locator('tbody tr').count())
      .toBe(3);
    expect(alice.problems).toEqual([]);
  });

  it('replays a delivery after asking, once however often the button is pressed, and links the new one', async () => {
    const page = bob.page;
    await page.goto(`${zekt()}/deliveries/${completedDelivery.deliveryId}`);
    await page.getByRole('button', { name: 'Replay' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replay this delivery?' });
    expect(await dialog.textContent()).toContain('to globex/app again');
    const before = bob.requests.filter((r) => r.startsWith('POST /api/replay/')).length;
    await dialog.getByRole('button', { name: 'Replay' }).dblclick();
    const notice = page.getByRole('status').filter({ hasText: 'Replayed as delivery-' });
    await notice.waitFor();
    expect(bob.requests.filter((r) => r.startsWith('POST /api/replay/')).length).toBe(before + 1);
    const original = await api(`/api/v1/deliveries/${completedDelivery.deliveryId}`, bobToken);
    expect(original.replayedBy).toMatch(/^delivery-/);
    expect(await notice.getByRole('link').textContent()).toBe(original.replayedBy);
    await notice.getByRole('link').click();
    await page.waitForURL(`${zekt()}/deliveries/${original.replayedBy}`);
    await page.getByText('Replay of').waitFor();
    const replay = await api(`/api/v1/deliveries/${original.replayedBy}`, bobToken);
    expect(replay).toMatchObject({ replayOf: completedDelivery.deliveryId, isReplay: true, retryNumber: 0 });
    await eventually(() =>
      json('GET', `${sim()}/_sim/dispatches?repository=globex/app`).then((d) =>
        d.body.some((x: JsonBody) => x.clientPayload?.zekt?.deliveryId === replay.deliveryId)
          ? true
          : undefined,
      ),
    );
    expect(bob.problems).toEqual([]);
  });

  it('alice revokes the subscription after asking; bob sees it revoked', async () => {
    const page = alice.page;
    await goTo(page, 'Provider', 'Subscribers');
    await page.getByRole('button', { name: 'Revoke globex (globex/app)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke globex’s subscription?' });
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const past = page.getByRole('table', { name: 'Denied and revoked' });
    await expect.poll(() => past.getByRole('row').filter({ hasText: 'Revoked' }).count()).toBe(1);
    expect((await api(`/api/v1/subscriptions/${subscriptionId}`, aliceToken)).status).toBe('revoked');

    await goTo(bob.page, 'Consumer', 'Zekt Subscriptions');
    const row = bob.page
      .getByRole('table', { name: 'Subscriptions' })
      .getByRole('row')
      .filter({ hasText: 'acme-deploys' });
    expect(await row.locator('.badge').textContent()).toBe('Revoked');
    expect(await row.getByRole('switch').count()).toBe(0);
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });
});
