import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { OAuthBrowser } from '../support/oauth-browser.js';

/**
 * After the login the browser lands on a path of the console, never on
 * another origin; logging out is a change and needs the console's Origin like every other change.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await h.sim.createInstallation({
    account: { login: 'acme', type: 'Organization' },
    repositories: ['api'],
    sender: { login: 'alice' },
  });
});
afterAll(async () => {
  await h.close();
});

describe('the login’s return path', () => {
  it('resolves returnTo against the console origin and refuses other origins (tabs, newlines, backslashes)', async () => {
    const origin = new URL(h.url).origin;
    const raw = [
      '/%09/evil.example/',
      '/%0a/evil.example',
      '%09//evil.example',
      '/%5C/evil.example',
      '/\\/evil.example',
    ];
    const decoded = [
      '/\t/evil.example/',
      '/\r\n/evil.example',
      ' //evil.example',
      'https:evil.example',
      '//evil.example',
    ];
    const answers = [
      ...(await Promise.all(raw.map((r) => new OAuthBrowser(h.url).logIn('alice', { rawReturnTo: r })))),
      ...(await Promise.all(decoded.map((r) => new OAuthBrowser(h.url).logIn('alice', { returnTo: r })))),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(302);
      const location = answer.headers.get('location')!;
      expect(location.startsWith('/') && !location.startsWith('//')).toBe(true);
      expect(new URL(location, origin).origin).toBe(origin);
      expect(location).not.toMatch(/[\s\\]/);
    }
  });

  it('answers CR/LF and non-Latin-1 characters with a redirect, not a 500', async () => {
    for (const returnTo of ['/deliveries\r\nSet-Cookie: x=1', '/connections/☃?q=ü#ü', '/%E2%98%83']) {
      const answer = await new OAuthBrowser(h.url).logIn('alice', { returnTo });
      expect(answer.status).toBe(302);
      const location = answer.headers.get('location')!;
      expect(new URL(location, h.url).origin).toBe(new URL(h.url).origin);
      expect(location).toMatch(/^\/[\x21-\x7e]*$/);
      expect(answer.headers.get('set-cookie') ?? '').not.toContain('x=1');
    }
    const kept = await new OAuthBrowser(h.url).logIn('alice', { returnTo: '/connections/☃?q=1' });
    expect(kept.headers.get('location')).toBe('/connections/%E2%98%83?q=1');
  });

  it('normalises dot segments once, at the login: what it keeps is already the path the browser lands on', async () => {
    const origin = new URL(h.url).origin;
    const cases: Array<[string, string]> = [
      ['/.//evil.example', '/evil.example'],
      ['/.//evil.example/steal?x=1#y', '/evil.example/steal?x=1#y'],
      ['/./..//evil.example', '/evil.example'],
      ['/a/..//evil.example', '/evil.example'],
      ['/a/b/../..///evil.example', '/evil.example'],
      ['/%2e//evil.example', '/evil.example'],
      ['/%2E%2E//evil.example', '/evil.example'],
      ['/.\\/evil.example', '/evil.example'],
      ['/deliveries/./../connections', '/connections'],
    ];
    for (const [returnTo, landing] of cases) {
      const browser = new OAuthBrowser(h.url);
      const start = await browser.get(`/auth/login?returnTo=${encodeURIComponent(returnTo)}`);
      expect(start.status).toBe(302);
      // The path the login keeps for after GitHub (second part of the state cookie).
      const kept = Buffer.from(browser.cookies.get('zekt_oauth')!.split('.')[1]!, 'base64url').toString(
        'utf8',
      );
      expect(kept, returnTo).toBe(landing);
      // Final: resolved again, as the callback and the browser do, it is itself.
      const again = new URL(kept, `${origin}/`);
      expect(`${again.pathname}${again.search}${again.hash}`).toBe(kept);

      const authorize = new URL(start.headers.get('location')!);
      authorize.searchParams.set('login', 'alice');
      const github = await browser.get(authorize.toString());
      const answer = await browser.get(github.headers.get('location')!);
      expect(answer.status).toBe(302);
      expect(answer.headers.get('location'), returnTo).toBe(landing);
      expect(new URL(answer.headers.get('location')!, origin).origin).toBe(origin);
    }
  });

  it('keeps a console path with its query', async () => {
    const answer = await new OAuthBrowser(h.url).logIn('alice', { returnTo: '/deliveries?status=Failed' });
    expect(answer.headers.get('location')).toBe('/deliveries?status=Failed');
  });
});

describe('logout', () => {
  it('refuses a logout from a foreign Origin and keeps the session', async () => {
    const browser = new OAuthBrowser(h.url);
    await browser.logIn('alice');
    const forged = await browser.request('POST', '/auth/logout', { origin: 'https://evil.example' });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('content-type')).toContain('application/problem+json');
    expect(((await forged.json()) as { code: string }).code).toBe('csrf_rejected');
    expect((await browser.get('/api/v1/me')).status).toBe(200);

    const real = await browser.request('POST', '/auth/logout', { origin: new URL(h.url).origin });
    expect(real.status).toBe(204);
    expect((await browser.get('/api/v1/me')).status).toBe(401);
  });
});
