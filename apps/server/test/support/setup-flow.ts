import { expect } from 'vitest';
import { OAuthBrowser } from './oauth-browser.js';

/**
 * Registering the GitHub App through setup, the way a browser does it, step by step so tests can
 * break in anywhere: the setup URL (code → setup session cookie), the manifest from Zekt, GitHub's
 * (the simulator's) manifest pages, and the redirect back to Zekt's callback. Redirects are
 * followed by hand (`OAuthBrowser`), so every answer can be checked.
 */
export interface ManifestStart {
  action: string;
  manifest: string;
}

export class SetupBrowser extends OAuthBrowser {
  constructor(readonly zektUrl: string) {
    super(zektUrl);
  }

  /** Opens the setup URL `zekt serve` printed; the answer (303 to /setup with a cookie when right). */
  openSetupUrl(setupUrl: string): Promise<Response> {
    return this.get(setupUrl);
  }

  /** `POST /api/setup/manifest` from Zekt's own page (its Origin). */
  async startRegistration(
    body: Record<string, unknown> = { account: 'user', name: 'Zekt test', public: true },
  ): Promise<Response> {
    return this.request('POST', '/api/setup/manifest', { origin: this.zektUrl }, body);
  }

  async startedRegistration(body?: Record<string, unknown>): Promise<ManifestStart> {
    const started = await this.startRegistration(body);
    expect(started.status, await started.clone().text()).toBe(200);
    return (await started.json()) as ManifestStart;
  }
}

/**
 * What the person does on GitHub's (the simulator's) manifest pages, signed in as `login`: post the
 * manifest, confirm under `name`. Resolves with the URL GitHub sends the browser back to
 * (`redirect_url?code=…&state=…`).
 */
export async function confirmOnGitHub(
  input: ManifestStart & { simUrl: string; login: string; name?: string },
): Promise<URL> {
  const signIn = await fetch(`${input.simUrl}/_sim/oauth/signed-in`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login: input.login }),
  });
  expect(signIn.status).toBe(204);
  const post = (fields: Record<string, string>) =>
    fetch(input.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    });
  const review = await post({ manifest: input.manifest });
  expect(review.status, await review.clone().text()).toBe(200);
  const name = input.name ?? (JSON.parse(input.manifest) as { name: string }).name;
  const created = await post({ manifest: input.manifest, confirm: 'create', name });
  expect(created.status, await created.clone().text()).toBe(302);
  return new URL(created.headers.get('location') ?? '');
}

/**
 * The whole registration for a Zekt in setup mode, as `login` on the simulator: resolves with the
 * browser (holding the setup session) once Zekt sent it back to /setup.
 */
export async function registerAppThroughSetup(input: {
  zektUrl: string;
  simUrl: string;
  setupUrl: string;
  login: string;
  name?: string;
  public?: boolean;
}): Promise<SetupBrowser> {
  const browser = new SetupBrowser(input.zektUrl);
  const opened = await browser.openSetupUrl(input.setupUrl);
  expect(opened.status, await opened.clone().text()).toBe(303);
  const started = await browser.startedRegistration({
    account: 'user',
    name: input.name ?? 'Zekt test',
    public: input.public ?? true,
  });
  const back = await confirmOnGitHub({ ...started, simUrl: input.simUrl, login: input.login });
  const finished = await browser.get(back.toString());
  expect(finished.status, await finished.clone().text()).toBe(303);
  expect(finished.headers.get('location')).toBe('/setup');
  return browser;
}
