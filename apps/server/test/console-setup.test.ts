import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_SETUP_TIMEOUT_MS, launchChromium } from './support/browser.js';
import { goTo, seriousViolations, signInToGitHub } from './support/console-page.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { type JsonBody, json, ProcessGroup } from './support/processes.js';

/**
 * From a fresh `zekt serve` with no GitHub App to a delivery, in a browser, with the simulator as
 * GitHub: the setup URL the server printed → registering the App on the simulator's manifest page
 * → installing it → logging in → enabling a provider repository, whitelisting, publishing →
 * another person subscribes → approval → a provider run is delivered. The built server and the
 * simulator run as processes of their own.
 */
const processes = new ProcessGroup();
let stack: ProcessStack;
let setupUrl: string;
let browser: Browser;
const contexts: BrowserContext[] = [];
const problems: string[] = [];

const sim = () => stack.sim.url;
const zekt = () => stack.zektUrl;

beforeAll(async () => {
  browser = await launchChromium();
  stack = await prepareProcessStack(processes, { name: 'console-setup', withoutApp: true });
  ({ setupUrl } = await processes.startZektInSetupMode(stack.zektEnv));
}, BROWSER_SETUP_TIMEOUT_MS);

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
  expect(problems.splice(0)).toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

/** A person's browser; Zekt answers ≥ 400 and script errors are problems unless `expected`. */
async function person(expected: RegExp[] = []): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (url.origin !== zekt() || response.status() < 400) return;
    const line = `${response.status()} ${url.pathname}`;
    if (!expected.some((pattern) => pattern.test(line))) problems.push(line);
  });
  return page;
}

/** The setup page's form, filled in and sent to GitHub; then GitHub's page, confirmed. */
async function registerOnGitHub(page: Page, name: string): Promise<void> {
  await page.goto(setupUrl);
  await page.waitForURL(`${zekt()}/setup`);
  const form = page.getByRole('form', { name: 'Register the GitHub App' });
  await form.getByLabel('App name').fill(name);
  expect(await form.getByLabel('My personal account').isChecked()).toBe(true);
  expect(await form.getByLabel('Public: any account may install it').isChecked()).toBe(true);
  await form.getByRole('button', { name: 'Register on GitHub' }).click();
  await page.getByRole('heading', { name: 'Create GitHub App for alice' }).waitFor();
  expect(new URL(page.url()).pathname).toBe('/settings/apps/new');
  expect(await page.getByRole('table', { name: 'Manifest' }).textContent()).toContain(
    `${zekt()}/webhooks/github`,
  );
  await page.getByRole('button', { name: 'Create GitHub App' }).click();
}

/** The simulator's install page: the signed-in person installs the App on their account. */
async function install(page: Page, repository: string): Promise<number> {
  await page.getByLabel('Repositories').fill(repository);
  await page.getByRole('button', { name: 'Install' }).click();
  // GitHub sends the browser on to the App's Setup URL: Zekt's setup page.
  await page.waitForURL(/\/setup\?installation_id=\d+&setup_action=install$/);
  expect(new URL(page.url()).origin).toBe(zekt());
  return Number(new URL(page.url()).searchParams.get('installation_id'));
}

describe('setting Zekt up in a browser', () => {
  it('shows the first-run page to a browser without the setup code', async () => {
    const page = await person([/^401 \/api\/v1\/me$/]);
    await page.goto(`${zekt()}/`);
    await page.getByText('This Zekt has no GitHub App yet.').waitFor();
    expect(await page.getByRole('form', { name: 'Register the GitHub App' }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.goto(`${zekt()}/setup?code=not-the-code`);
    await page.waitForURL(`${zekt()}/setup?problem=invalid_setup_code`);
    await page.getByRole('alert').filter({ hasText: 'That is not the setup code' }).waitFor();
    await page.getByRole('link', { name: 'Back to setup' }).click();
    await page.getByText('This Zekt has no GitHub App yet.').waitFor();
  });

  it('explains a registration GitHub refused to hand over, and offers to register again', async () => {
    const fault = await json('POST', `${sim()}/_sim/faults`, {
      method: 'POST',
      path: '/app-manifests/*/conversions',
      faults: [{ kind: 'status', status: 422 }],
    });
    expect(fault.status).toBe(201);
    await signInToGitHub(sim(), 'alice');
    const page = await person();
    await registerOnGitHub(page, 'Zekt refused');
    await page.waitForURL(`${zekt()}/setup?problem=manifest_code_rejected`);
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: 'GitHub did not hand over the App' }).waitFor();
    expect(await alert.textContent()).toContain(`${sim()}/settings/apps`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('link', { name: 'Register again' }).click();
    await page.getByRole('form', { name: 'Register the GitHub App' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    expect((await json('GET', `${zekt()}/api/setup`)).body.configured).toBe(false);
  });

  it('registers the App, installs it, logs in, and delivers a provider run to a subscriber', async () => {
    // alice registers the App from the setup URL and installs it.
    await signInToGitHub(sim(), 'alice');
    const alice = await person();
    await registerOnGitHub(alice, 'Zekt e2e');
    await alice.waitForURL(`${zekt()}/setup`);
    await alice
      .getByRole('status')
      .filter({ hasText: 'The GitHub App Zekt e2e is registered for alice.' })
      .waitFor();
    expect(await seriousViolations(alice)).toEqual([]);
    const apps = (await json('GET', `${sim()}/_sim/apps`)).body as JsonBody[];
    const app = apps.find((a) => a.slug === 'zekt-e2e')!;
    expect(app).toMatchObject({ owner: 'alice', public: true, setupUrl: `${zekt()}/setup` });
    expect((await fetch(`${zekt()}/readyz`)).status).toBe(200);

    await alice.getByRole('link', { name: 'Install the App on GitHub' }).click();
    await alice.waitForURL(`${sim()}/apps/zekt-e2e/installations/new`);
    await install(alice, 'api');
    await alice.getByRole('link', { name: 'Log in with GitHub' }).click();
    await alice.locator('#user').filter({ hasText: 'alice' }).waitFor();
    await goTo(alice, null, 'GitHub App');
    expect(await alice.locator('#app-source').textContent()).toContain('Registered through setup');

    // bob installs the (public) App on his own account from its GitHub page, and logs in.
    await signInToGitHub(sim(), 'bob');
    const bob = await person();
    await bob.goto(`${sim()}/apps/zekt-e2e/installations/new`);
    const bobInstallation = await install(bob, 'app');
    await bob.getByText('Thank you for installing it.').waitFor();
    await bob.getByRole('link', { name: 'Log in with GitHub' }).click();
    await bob.locator('#user').filter({ hasText: 'bob' }).waitFor();

    // alice enables alice/api, whitelists the workflow its first run was blocked for, publishes.
    await goTo(alice, 'Provider', 'Zekt Repos');
    const provider = alice.getByRole('switch', { name: 'Provider: alice/api' });
    await provider.click();
    await expect.poll(() => provider.textContent()).toBe('Enabled — webhook placed');
    const blocked = await json('POST', `${sim()}/_sim/repos/alice/api/runs`, { workflow: 'deploy.yml' });
    expect(blocked.status).toBe(201);
    await alice.getByRole('link', { name: 'Workflows of alice/api' }).click();
    const workflow = alice
      .locator('table[aria-label="Workflows of alice/api"] tbody tr')
      .filter({ hasText: 'deploy.yml' });
    await expect.poll(() => workflow.count(), { timeout: 10_000 }).toBe(1);
    await workflow.getByRole('switch', { name: 'Whitelist deploy.yml' }).click();
    await expect.poll(() => workflow.getByRole('switch').getAttribute('aria-checked')).toBe('true');
    await expect.poll(() => workflow.getByRole('switch').getAttribute('aria-busy')).toBe('false');
    await workflow.getByRole('link', { name: 'Create service from deploy.yml' }).click();
    const form = alice.getByRole('form', { name: 'Service' });
    await expect.poll(() => form.getByLabel('Workflow').inputValue()).toBe('deploy.yml');
    await form.getByLabel('Slug').fill('alice-deploys');
    await form.getByLabel('Event type').fill('alice-deployed');
    await form.getByLabel('Publish in the Directory').check();
    await form.getByRole('button', { name: 'Create service' }).click();
    await alice.getByRole('status').filter({ hasText: 'Service alice-deploys saved.' }).waitFor();

    // bob asks for access from the Directory; alice approves.
    await goTo(bob, null, 'Directory');
    const card = bob
      .getByRole('list', { name: 'Services' })
      .getByRole('listitem')
      .filter({ hasText: 'alice-deploys' });
    await card.getByRole('button', { name: 'Request access to alice-deploys' }).click();
    const dialog = bob.getByRole('dialog', { name: 'Request access to alice-deploys' });
    await dialog.getByLabel('Delivers to').selectOption('bob/app');
    await dialog.getByRole('button', { name: 'Request access' }).click();
    await bob.getByRole('status').filter({ hasText: 'Access to alice-deploys requested' }).waitFor();
    await goTo(alice, 'Provider', 'Subscribers');
    await alice
      .getByRole('table', { name: 'Requests' })
      .getByRole('button', { name: 'Approve bob (bob/app)' })
      .click();
    const active = alice.getByRole('table', { name: 'Active subscribers' });
    await expect.poll(() => active.getByRole('row').filter({ hasText: 'bob/app' }).count()).toBe(1);

    // A provider run with a message: the dispatch reaches bob/app through bob's installation.
    const run = await json('POST', `${sim()}/_sim/repos/alice/api/runs`, {
      workflow: 'deploy.yml',
      message: { zektUrl: zekt(), eventType: 'alice-deployed', payload: { version: '1.0.0' } },
    });
    expect(run.status).toBe(201);
    const dispatches = async () =>
      (await json('GET', `${sim()}/_sim/dispatches?repository=bob/app`)).body as JsonBody[];
    await expect.poll(async () => (await dispatches()).length, { timeout: 20_000 }).toBe(1);
    const [dispatch] = await dispatches();
    expect(dispatch).toMatchObject({ eventType: 'alice-deployed', installationId: bobInstallation });
    expect(dispatch!.clientPayload.zekt.payload).toEqual({ version: '1.0.0' });
    await goTo(bob, 'Consumer', 'Delivery Status');
    const row = bob
      .locator('table[aria-label="Deliveries"] tbody tr')
      .filter({ hasText: `alice/api #${run.body.run.id}` });
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
  });
});
