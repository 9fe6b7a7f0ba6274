import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/**
 * A user at the console in a browser of their own (cookies apart), logged in through the GitHub
 * simulator's OAuth pages exactly as a person would: the "Log in with GitHub" link, GitHub's
 * authorize page, back to the console.
 */
export interface ConsoleUser {
  login: string;
  context: BrowserContext;
  page: Page;
  /** Script errors and Zekt answers ≥ 400 the page met, except those a test expects. */
  problems: string[];
  /** Answers ≥ 400 with these paths (regular expressions) are expected by the test. */
  expect(pattern: RegExp): void;
  /** Requests the page sent to Zekt, as `METHOD /path`. */
  requests: string[];
}

export async function openConsole(
  browser: Browser,
  input: { zektUrl: string; simUrl: string; login: string; viewport?: { width: number; height: number } },
): Promise<ConsoleUser> {
  const context = await browser.newContext({ viewport: input.viewport ?? { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  const expected: RegExp[] = [/^401 \/api\/v1\/me$/];
  const requests: string[] = [];
  page.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.origin === input.zektUrl) requests.push(`${request.method()} ${url.pathname}`);
  });
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (url.origin !== input.zektUrl || response.status() < 400) return;
    const line = `${response.status()} ${url.pathname}`;
    if (!expected.some((pattern) => pattern.test(line))) problems.push(line);
  });
  await signInToGitHub(input.simUrl, input.login);
  await page.goto(`${input.zektUrl}/`);
  await page.getByRole('link', { name: 'Log in with GitHub' }).click();
  await page.locator('#user').filter({ hasText: input.login }).waitFor();
  return {
    login: input.login,
    context,
    page,
    problems,
    requests,
    expect: (pattern) => expected.push(pattern),
  };
}

/** The simulated github.com's browser session: who `/login/oauth/authorize` authorizes at once. */
export async function signInToGitHub(simUrl: string, login: string | null): Promise<void> {
  const response = await fetch(`${simUrl}/_sim/oauth/signed-in`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login }),
  });
  if (response.status !== 204)
    throw new Error(`the simulator refused to sign ${login} in: ${response.status}`);
}

/** A link of the console's navigation, e.g. ("Provider", "Zekt Repos") or (null, "Usage"). */
export async function goTo(
  page: Page,
  section: 'Provider' | 'Consumer' | null,
  label: string,
): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Console' });
  await nav.getByRole('link', { name: section ? `${section} ${label}` : label, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: label === 'Directory' ? 'Directory' : label }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/**
 * axe-core's WCAG 2.1 A/AA rules on the page as it is now; returns the serious and critical
 * violations. axe runs through the DevTools protocol, which the console's CSP does not govern.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  // Evaluated on the page's root element: the tests are type-checked without the DOM's globals.
  const violations = await page.locator('html').evaluate(async (html) => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is the global the evaluated source defines.
    const axe = (globalThis as any).axe;
    const result = await axe.run(html.ownerDocument, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      resultTypes: ['violations'],
    });
    return result.violations as AxeViolation[];
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`,
    );
}
