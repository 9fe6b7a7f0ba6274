import { expect } from 'vitest';

/**
 * A browser for the console's GitHub login: a cookie jar and redirects followed by hand, so tests
 * see every `Location` the server sends.
 */
export class OAuthBrowser {
  readonly cookies = new Map<string, string>();
  constructor(private readonly origin: string) {}

  get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.request('GET', url, headers);
  }

  async request(method: string, url: string, headers: Record<string, string> = {}, body?: unknown) {
    const target = new URL(url, this.origin);
    const sameSite = target.origin === this.origin;
    const response = await fetch(target, {
      method,
      redirect: 'manual',
      headers: {
        ...(sameSite && this.cookies.size > 0
          ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
          : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (sameSite) {
      for (const cookie of response.headers.getSetCookie()) {
        const [pair = ''] = cookie.split(';');
        const index = pair.indexOf('=');
        const name = pair.slice(0, index);
        if (/Max-Age=0/.test(cookie)) this.cookies.delete(name);
        else this.cookies.set(name, pair.slice(index + 1));
      }
    }
    return response;
  }

  /**
   * /auth/login → GitHub's authorize page (as `login`) → /auth/callback; the callback's answer.
   * `rawReturnTo` goes into the query string as it is (already encoded), `returnTo` encoded.
   */
  async logIn(login: string, options: { returnTo?: string; rawReturnTo?: string } = {}): Promise<Response> {
    const query =
      options.rawReturnTo !== undefined
        ? `?returnTo=${options.rawReturnTo}`
        : options.returnTo !== undefined
          ? `?returnTo=${encodeURIComponent(options.returnTo)}`
          : '';
    const start = await this.get(`/auth/login${query}`);
    expect(start.status, await start.clone().text()).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    authorize.searchParams.set('login', login);
    const github = await this.get(authorize.toString());
    expect(github.status).toBe(302);
    return this.get(github.headers.get('location')!);
  }
}
