import { afterEach, describe, expect, it } from 'vitest';
import { setUpWorld } from '../support/demo-world.js';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * defect 12 (with the logout's Origin check in login-redirect.test.ts): HSTS over https,
 * and the directory forgets the services of an account that uninstalled the App.
 */
let h: Harness;
afterEach(async () => {
  await h.close();
});

describe('Strict-Transport-Security', () => {
  it('is sent when the base URL is https, and only then', async () => {
    h = await startHarness({ env: { ZEKT_BASE_URL: 'https://zekt.example.com' } });
    for (const path of ['/healthz', '/api/v1/me']) {
      const response = await fetch(`${h.url}${path}`);
      expect(response.headers.get('strict-transport-security')).toMatch(/^max-age=\d{7,}/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    await h.close();
    h = await startHarness();
    expect((await fetch(`${h.url}/healthz`)).headers.get('strict-transport-security')).toBeNull();
  });
});

describe('the directory', () => {
  it('drops the services of an account that uninstalled the App, and refuses requests for them', async () => {
    h = await startHarness();
    const world = await setUpWorld(h);
    const listed = await h.call('GET', '/api/v1/directory', { token: world.consumerToken });
    expect(listed.body.services.map((s: { slug: string }) => s.slug)).toEqual(['acme-deploys']);
    const acme = h.sim.app;
    expect(acme).toBeDefined();
    const installation = await h.zekt.store.db
      .selectFrom('accounts')
      .select('installation_id')
      .where('login', '=', 'acme')
      .executeTakeFirstOrThrow();
    await h.sim.deleteInstallation(Number(installation.installation_id));
    const after = await h.call('GET', '/api/v1/directory', { token: world.consumerToken });
    expect(after.body.services).toEqual([]);
    const request = await h.call('POST', '/api/v1/subscriptions', {
      token: world.consumerToken,
      body: { serviceId: world.serviceId, deliversTo: 'globex/app' },
    });
    expect(request.status).toBe(404);
  });
});
