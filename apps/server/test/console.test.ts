import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium } from '../src/test-support/browser.js';
import { setUpWorld } from '../src/test-support/demo-world.js';
import { eventually, type Harness, startHarness } from '../src/test-support/harness.js';

/**
 * The console in a real browser (Chromium): logging in with GitHub (the simulator's OAuth pages),
 * Delivery Status with a delivery's attempts and its replay, My Connections with diagnostics,
 * Usage, logging out. Every view reads the same management API the CLI uses.
 */
let browser: Browser;
let h: Harness;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

beforeEach(async () => {
  h = await startHarness();
  await setUpWorld(h);
  page = await browser.newPage();
  pageErrors.length = 0;
  // Script errors, and any answer of Zekt's that is an error except the console's probe of the
  // session before the login (401 from /api/v1/me).
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (url.origin !== h.url || response.status() < 400) return;
    if (response.status() === 401 && url.pathname === '/api/v1/me') return;
    pageErrors.push(`${response.status()} ${url.pathname}`);
  });
});
afterEach(async () => {
  await page?.close();
  await h.close();
});

async function providerRun(): Promise<void> {
  const run = await h.sim.runWorkflow({
    repository: 'acme/api',
    workflow: 'deploy.yml',
    message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { version: '1.2.3' } },
  });
  expect(run.message?.status).toBe(201);
  await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
}

async function logIn(login: string): Promise<void> {
  h.sim.signIn(login);
  await page.goto(`${h.url}/`);
  await page.getByRole('link', { name: 'Log in with GitHub' }).click();
  await page.waitForURL(`${h.url}/`);
  await expect.poll(() => page.locator('#user').textContent()).toBe(login);
}

describe('console', () => {
  it('serves its page with headers that keep it from being framed or fed foreign scripts', async () => {
    const response = await fetch(`${h.url}/connections`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    // API paths stay API 404s, also for a browser.
    const api = await fetch(`${h.url}/api/v1/nope`, { headers: { accept: 'text/html' } });
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toContain('application/problem+json');
  });

  it('logs in with GitHub and shows Delivery Status, a delivery’s attempts, and replays it', async () => {
    await providerRun();
    await logIn('alice');
    expect(await page.locator('#who').textContent()).toContain('acme');

    const row = page.locator('table[aria-label="Deliveries"] tbody tr');
    await expect.poll(() => row.count()).toBe(1);
    const cells = await row.first().locator('td').allTextContents();
    expect(cells[0]).toBe('Dispatched');
    expect(cells[1]).toBe('acme-deployed');
    expect(cells[2]).toMatch(/^acme\/api #\d+$/);
    expect(cells[3]).toBe('globex/app');
    expect(cells[7]).toBe('0');

    await row.first().getByRole('link', { name: 'acme-deployed' }).click();
    const attempts = page.locator('table[aria-label="Attempts"] tbody tr');
    await expect.poll(() => attempts.count()).toBe(1);
    expect(await attempts.first().locator('td').nth(2).textContent()).toBe('accepted');

    await page.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toMatch(/^Replayed as delivery-/);
    const replay = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[1]);
    expect((replay.clientPayload as { zekt: { isReplay: boolean } }).zekt.isReplay).toBe(true);

    // The filter narrows the list; the URL keeps it.
    await page.getByLabel('Status').selectOption('Failed');
    await page.waitForURL(/status=Failed/);
    await expect.poll(() => page.getByText('No deliveries yet.').count()).toBe(1);
    expect(pageErrors).toEqual([]);
  });

  it('shows My Connections with health, diagnostics, and Usage; logs out', async () => {
    await providerRun();
    await logIn('bob');
    await page.getByRole('link', { name: 'My Connections' }).click();
    const card = page.locator('article.card');
    await expect.poll(() => card.count()).toBe(1);
    expect(await card.locator('h3').textContent()).toBe('acme-deploys');
    expect(await card.locator('.badge').textContent()).toBe('Healthy');
    expect(await card.textContent()).toContain('acme/api → globex/app');
    await card.getByRole('button', { name: 'Diagnostics' }).click();
    await expect.poll(() => page.getByText('No failed attempts.').count()).toBe(1);

    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(`${h.url}/usage`);
    const usage = page.locator('table[aria-label="Usage of globex"]');
    await expect.poll(() => usage.count()).toBe(1);
    expect(await usage.textContent()).toContain('dispatch api calls');

    await page.getByRole('button', { name: 'Log out' }).click();
    await expect.poll(() => page.getByRole('link', { name: 'Log in with GitHub' }).count()).toBe(1);
    await page.reload();
    await expect.poll(() => page.getByRole('link', { name: 'Log in with GitHub' }).count()).toBe(1);
    expect(pageErrors).toEqual([]);
  });

  it('sends a visitor without a session to the login, and back to the page they asked for', async () => {
    await providerRun();
    await page.goto(`${h.url}/usage`);
    await page.getByRole('link', { name: 'Log in with GitHub' }).click();
    await page.waitForURL(/\/login\/oauth\/authorize/);
    // Nobody is signed in to the simulated GitHub: its sign-in page lists the users.
    await page.getByRole('link', { name: 'alice', exact: true }).click();
    await page.waitForURL(`${h.url}/usage`);
    await expect.poll(() => page.locator('table[aria-label="Usage of acme"]').count()).toBe(1);
  });
});
