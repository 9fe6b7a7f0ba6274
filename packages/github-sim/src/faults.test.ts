import { App } from '@octokit/app';
import { Octokit } from '@octokit/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../test/support/github-client.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import { waitUntil } from '../test/support/wait-until.js';
import { httpRequest } from './http-client.js';
import type { GitHubSimulator } from './index.js';

const clock = manualClock();
let sim: GitHubSimulator;
let octokit: Octokit;
let installationId: number;
beforeAll(async () => {
  sim = await createTestSimulator({ clock });
  const { installation } = await sim.createInstallation({
    account: { login: 'globex', type: 'Organization' },
    repositories: ['app', 'web'],
  });
  installationId = installation.id;
  const app = new App({
    appId: sim.app.id,
    privateKey: sim.app.privateKeyPem,
    Octokit: Octokit.defaults({ baseUrl: sim.apiUrl }),
  });
  octokit = await app.getInstallationOctokit(installation.id);
});
afterEach(() => sim.clearFaults());
afterAll(() => sim.close());

function dispatch(repo = 'app') {
  return octokit.request('POST /repos/{owner}/{repo}/dispatches', {
    owner: 'globex',
    repo,
    event_type: 'go',
  });
}

/** What Octokit's `RequestError` carries (`@octokit/request-error` is not a dependency of ours). */
interface RequestError extends Error {
  status: number;
  response?: { headers: Record<string, string | undefined>; data: unknown };
}

function isRequestError(error: unknown): error is RequestError {
  return (
    error instanceof Error && error.name === 'HttpError' && typeof (error as RequestError).status === 'number'
  );
}

/** The RequestError Octokit throws for a faulted dispatch. */
async function failedDispatch(repo = 'app'): Promise<RequestError> {
  const error = await dispatch(repo).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isRequestError(error)) throw new Error(`expected Octokit's RequestError, got ${String(error)}`);
  return error;
}

/** The status of a dispatch, faulted or not. */
async function dispatchStatus(repo = 'app'): Promise<number> {
  try {
    return (await dispatch(repo)).status;
  } catch (error) {
    if (isRequestError(error)) return error.status;
    throw error;
  }
}

function lastJournalEntry() {
  const journal = sim.journal();
  return journal[journal.length - 1];
}

const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

describe('fault injection (injectFaults)', () => {
  it('status: any answer; 4xx/5xx get GitHub’s basic-error body and the usual headers', async () => {
    const { id } = sim.injectFaults({
      method: 'post',
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'status', status: 503 }],
    });
    const error = await failedDispatch();
    expect(error.status).toBe(503);
    expect(error.response?.data).toEqual({
      message: 'Service Unavailable',
      documentation_url: 'https://docs.github.com/rest',
      status: '503',
    });
    const headers = error.response?.headers ?? {};
    expect(headers['x-github-request-id']).toMatch(/^[0-9A-F]{4}(:[0-9A-F]+){4}$/);
    expect(headers['x-ratelimit-limit']).toBe('5000');
    expect(headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(lastJournalEntry()).toMatchObject({
      method: 'POST',
      path: '/api/v3/repos/globex/app/dispatches',
      status: 503,
      requestBody: { event_type: 'go' },
      auth: { kind: 'installation', installationId },
      fault: { ruleId: id, kind: 'status' },
    });
    // The rule is used up: the next dispatch is handled normally.
    expect(await dispatchStatus()).toBe(204);
    expect(sim.faults()).toEqual([
      {
        id,
        method: 'POST',
        path: '/repos/globex/app/dispatches',
        faults: [{ kind: 'status', status: 503 }],
        repeat: false,
        remaining: 0,
        served: 1,
      },
    ]);
  });

  it('status: custom headers win and a custom body is served as given (strings as text)', async () => {
    sim.injectFaults({
      path: '/repos/globex/app/dispatches',
      faults: [
        {
          kind: 'status',
          status: 502,
          headers: { 'x-ratelimit-remaining': '7', 'content-type': 'text/html' },
          body: '<html>unicorn</html>',
        },
        { kind: 'status', status: 500, body: { message: 'Oops', extra: true } },
      ],
    });
    const html = await httpRequest({
      method: 'POST',
      url: `${sim.apiUrl}/repos/globex/app/dispatches`,
      headers: {},
      body: '{}',
      timeoutMs: 5_000,
    });
    expect(html.status).toBe(502);
    expect(html.headers['content-type']).toBe('text/html');
    expect(html.headers['x-ratelimit-remaining']).toBe('7');
    expect(html.body).toBe('<html>unicorn</html>');
    const json = await failedDispatch();
    expect(json.status).toBe(500);
    expect(json.response?.data).toEqual({ message: 'Oops', extra: true });
  });

  it('rate_limit: 403 with x-ratelimit-remaining 0, the reset time and GitHub’s message', async () => {
    sim.injectFaults({
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'rate_limit' }, { kind: 'rate_limit', status: 429, resetInSeconds: 5 }],
    });
    const first = await failedDispatch();
    expect(first.status).toBe(403);
    expect(first.response?.data).toEqual({
      message: `API rate limit exceeded for installation ID ${installationId}.`,
      documentation_url:
        'https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-primary-rate-limits',
      status: '403',
    });
    expect(first.response?.headers).toMatchObject({
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-used': '5000',
      'x-ratelimit-reset': String(nowSeconds() + 60),
      'x-ratelimit-resource': 'core',
    });
    const second = await failedDispatch();
    expect(second.status).toBe(429);
    expect(second.response?.headers['x-ratelimit-reset']).toBe(String(nowSeconds() + 5));
    expect(second.response?.data).toMatchObject({ status: '429' });
  });

  it('rate_limit: names the App for JWT callers and the address for anonymous ones', async () => {
    sim.injectFaults({ path: '/app', faults: [{ kind: 'rate_limit' }, { kind: 'rate_limit' }] });
    const app = new App({
      appId: sim.app.id,
      privateKey: sim.app.privateKeyPem,
      Octokit: Octokit.defaults({ baseUrl: sim.apiUrl }),
    });
    const error = await app.octokit.request('GET /app').then(
      () => undefined,
      (caught: unknown) => caught as RequestError,
    );
    expect(error?.status).toBe(403);
    expect(error?.message).toContain(`API rate limit exceeded for app ID ${sim.app.id}.`);
    const anonymous = await fetch(`${sim.apiUrl}/app`);
    expect(anonymous.status).toBe(403);
    expect(anonymous.headers.get('x-ratelimit-limit')).toBe('60');
    expect(anonymous.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(((await anonymous.json()) as { message: string }).message).toMatch(
      /^API rate limit exceeded for [\d.:a-f]+\. \(But here's the good news: Authenticated requests get a higher rate limit\./,
    );
  });

  it('secondary_rate_limit: GitHub’s message with the request id, and retry-after', async () => {
    sim.injectFaults({
      path: '/repos/globex/app/dispatches',
      faults: [
        { kind: 'secondary_rate_limit' },
        { kind: 'secondary_rate_limit', status: 429, retryAfterSeconds: 7 },
      ],
    });
    const first = await failedDispatch();
    const requestId = first.response?.headers['x-github-request-id'];
    expect(first.status).toBe(403);
    expect(first.response?.headers['retry-after']).toBe('60');
    expect(first.response?.data).toEqual({
      message: `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
      documentation_url:
        'https://docs.github.com/en/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
      status: '403',
    });
    // Not a primary limit: the quota is not reported as spent.
    expect(first.response?.headers['x-ratelimit-remaining']).not.toBe('0');
    const second = await failedDispatch();
    expect(second.status).toBe(429);
    expect(second.response?.headers['retry-after']).toBe('7');
  });

  it('retry_after: the status (503 by default) with a Retry-After header', async () => {
    sim.injectFaults({
      path: '/repos/globex/app/dispatches',
      faults: [
        { kind: 'retry_after', retryAfterSeconds: 30 },
        { kind: 'retry_after', status: 429, retryAfterSeconds: 2 },
      ],
    });
    const first = await failedDispatch();
    expect(first.status).toBe(503);
    expect(first.response?.headers['retry-after']).toBe('30');
    expect(first.response?.data).toEqual({
      message: 'Service Unavailable',
      documentation_url: 'https://docs.github.com/rest',
      status: '503',
    });
    const second = await failedDispatch();
    expect(second.status).toBe(429);
    expect(second.response?.headers['retry-after']).toBe('2');
    expect(second.response?.data).toMatchObject({ message: 'Too Many Requests', status: '429' });
  });

  it('latency: answers normally after the delay', async () => {
    const { id } = sim.injectFaults({
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'latency', delayMs: 50 }],
    });
    expect(await dispatchStatus()).toBe(204);
    expect(lastJournalEntry()).toMatchObject({ status: 204, fault: { ruleId: id, kind: 'latency' } });
    expect(sim.dispatches({ repository: 'globex/app' }).length).toBeGreaterThan(0);
  });

  it('hang: never answers, so a client with a 200 ms timeout gives up', async () => {
    const { id } = sim.injectFaults({ path: '/repos/globex/app/dispatches', faults: [{ kind: 'hang' }] });
    const before = sim.dispatches().length;
    const error = await fetch(`${sim.apiUrl}/repos/globex/app/dispatches`, {
      method: 'POST',
      body: '{"event_type":"go"}',
      signal: AbortSignal.timeout(200),
    }).then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    expect(error?.name).toBe('TimeoutError');
    expect(lastJournalEntry()).toMatchObject({
      status: 0,
      error: 'hang',
      requestBody: { event_type: 'go' },
      fault: { ruleId: id, kind: 'hang' },
    });
    expect(sim.dispatches()).toHaveLength(before);
  });

  it('reset: destroys the connection without an answer (ECONNRESET)', async () => {
    sim.injectFaults({ path: '/repos/globex/app/dispatches', faults: [{ kind: 'reset' }] });
    const error = await httpRequest({
      method: 'POST',
      url: `${sim.apiUrl}/repos/globex/app/dispatches`,
      headers: { 'content-type': 'application/json' },
      body: '{"event_type":"go"}',
      timeoutMs: 5_000,
    }).then(
      () => undefined,
      (caught: unknown) => caught as NodeJS.ErrnoException,
    );
    expect(error?.code).toBe('ECONNRESET');
    expect(lastJournalEntry()).toMatchObject({ status: 0, error: 'reset', fault: { kind: 'reset' } });
    // The connection was the only casualty: the next request is answered.
    expect(await dispatchStatus()).toBe(204);
  });

  it('serves a rule’s faults in order, then stops; repeat cycles', async () => {
    const once = sim.injectFaults({
      path: '/repos/globex/app/dispatches',
      faults: [
        { kind: 'status', status: 503 },
        { kind: 'status', status: 502 },
      ],
    });
    expect([await dispatchStatus(), await dispatchStatus(), await dispatchStatus()]).toEqual([503, 502, 204]);
    expect(sim.faults()[0]).toMatchObject({ id: once.id, remaining: 0, served: 2 });

    sim.clearFaults();
    const cycling = sim.injectFaults({
      path: '/repos/globex/app/dispatches',
      repeat: true,
      faults: [
        { kind: 'status', status: 500 },
        { kind: 'status', status: 502 },
      ],
    });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push(await dispatchStatus());
    expect(statuses).toEqual([500, 502, 500, 502, 500]);
    expect(sim.faults()).toEqual([expect.objectContaining({ id: cycling.id, remaining: 1, served: 5 })]);
  });

  it('matches `*` segments, methods and the first live rule; other requests are untouched', async () => {
    const wildcard = sim.injectFaults({
      method: 'POST',
      path: '/repos/*/*/dispatches',
      faults: [
        { kind: 'status', status: 500 },
        { kind: 'status', status: 501 },
      ],
    });
    const specific = sim.injectFaults({
      path: '/repos/GLOBEX/web/dispatches',
      faults: [{ kind: 'status', status: 418 }],
    });
    // A GET of the repository matches neither rule.
    expect(
      (await octokit.request('GET /repos/{owner}/{repo}', { owner: 'globex', repo: 'app' })).status,
    ).toBe(200);
    // The wildcard rule came first, so it serves both repositories until it is used up …
    expect(await dispatchStatus('web')).toBe(500);
    expect(await dispatchStatus('app')).toBe(501);
    // … then the next live rule matches (case-insensitively), then nothing does.
    expect(await dispatchStatus('web')).toBe(418);
    expect(await dispatchStatus('web')).toBe(204);
    expect(sim.faults().map((rule) => [rule.id, rule.remaining])).toEqual([
      [wildcard.id, 0],
      [specific.id, 0],
    ]);

    // Paths copied from the journal (with /api/v3) work too; `*` is exactly one segment.
    sim.injectFaults({
      path: '/api/v3/app/installations/*/access_tokens',
      faults: [{ kind: 'status', status: 500 }],
    });
    sim.injectFaults({ path: '/repos/*/dispatches', faults: [{ kind: 'status', status: 500 }] });
    expect(await dispatchStatus()).toBe(204);
    const token = await fetch(`${sim.apiUrl}/app/installations/${installationId}/access_tokens`, {
      method: 'POST',
    });
    expect(token.status).toBe(500);
  });

  it('clears one rule or all, and refuses malformed rules', async () => {
    const a = sim.injectFaults({ path: '/app', faults: [{ kind: 'hang' }] });
    const b = sim.injectFaults({ path: '/app', faults: [{ kind: 'reset' }] });
    sim.clearFaults(a.id);
    expect(sim.faults().map((rule) => rule.id)).toEqual([b.id]);
    expect(() => sim.clearFaults(a.id)).toThrow(/no fault rule/);
    sim.clearFaults();
    expect(sim.faults()).toEqual([]);

    const bad: unknown[] = [
      { path: 'repos/x', faults: [{ kind: 'hang' }] },
      { path: '/app', faults: [] },
      { path: '/app', faults: [{ kind: 'explode' }] },
      { path: '/app', faults: [{ kind: 'status' }] },
      { path: '/app', faults: [{ kind: 'status', status: 99 }] },
      { path: '/app', faults: [{ kind: 'rate_limit', status: 500 }] },
      { path: '/app', faults: [{ kind: 'retry_after' }] },
      { path: '/app', faults: [{ kind: 'latency', delayMs: -1 }] },
      { path: '/app?x=1', faults: [{ kind: 'hang' }] },
      { method: 'PO ST', path: '/app', faults: [{ kind: 'hang' }] },
    ];
    for (const rule of bad) {
      expect(() => sim.injectFaults(rule as never), JSON.stringify(rule)).toThrow(/fault rule/);
    }
  });
});

describe('suspend / resume', () => {
  function get(path: string) {
    return httpRequest({ method: 'GET', url: `${sim.url}${path}`, headers: {}, timeoutMs: 5_000 });
  }

  it('refuses connections while suspended, lets in-flight requests finish, and serves again on the same port', async () => {
    const url = sim.url;
    // A request in flight (held by a latency fault) when the simulator suspends still gets its answer.
    const { id } = sim.injectFaults({
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'latency', delayMs: 300 }],
    });
    const inFlight = dispatchStatus();
    await waitUntil(() => sim.faults().find((rule) => rule.id === id)?.served === 1, 'the request to arrive');
    await sim.suspend();

    const refused = await get('/_sim/app').then(
      () => undefined,
      (caught: unknown) => caught as NodeJS.ErrnoException,
    );
    expect(refused?.code).toBe('ECONNREFUSED');
    expect(await inFlight).toBe(204);

    await sim.resume();
    expect(sim.url).toBe(url);
    expect((await get('/_sim/app')).status).toBe(200);
    // Fetch's pooled connections recover too.
    expect(await dispatchStatus()).toBe(204);
  });

  it('POST /_sim/suspend { forMs } answers, suspends, then resumes by itself', async () => {
    const response = await fetch(`${sim.url}/_sim/suspend`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ forMs: 300 }),
    });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ suspended: true, forMs: 300 });
    const refused = await get('/_sim/app').then(
      () => undefined,
      (caught: unknown) => caught as NodeJS.ErrnoException,
    );
    expect(refused?.code).toBe('ECONNREFUSED');

    const deadline = Date.now() + 5_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      status = await get('/_sim/app').then(
        (answer) => answer.status,
        () => 0,
      );
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(200);

    const bad = await fetch(`${sim.url}/_sim/suspend`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain('forMs');
  });
});

describe('the fault control API (/_sim/faults)', () => {
  it('adds, lists and deletes rules', async () => {
    const control = (method: string, path: string, body?: unknown) =>
      fetch(`${sim.url}/_sim${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const created = await control('POST', '/faults', {
      method: 'POST',
      path: '/repos/*/*/dispatches',
      faults: [{ kind: 'status', status: 503 }],
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(await dispatchStatus()).toBe(503);
    expect(await (await control('GET', '/faults')).json()).toEqual([
      expect.objectContaining({ id, remaining: 0, served: 1 }),
    ]);
    expect((await control('POST', '/faults', { path: '/x', faults: [] })).status).toBe(400);
    expect((await control('DELETE', `/faults/${id}`)).status).toBe(204);
    expect((await control('DELETE', `/faults/${id}`)).status).toBe(400);
    await control('POST', '/faults', { path: '/app', faults: [{ kind: 'hang' }] });
    expect((await control('DELETE', '/faults')).status).toBe(204);
    expect(await (await control('GET', '/faults')).json()).toEqual([]);
  });
});
