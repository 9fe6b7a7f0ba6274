import { afterEach, describe, expect, it } from 'vitest';
import { api, appJwt } from '../test/support/github-client.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import type { GitHubSimulator } from './index.js';

/** The App's public install page: a person installs it on their account, as on github.com. */
let sim: GitHubSimulator;
afterEach(async () => {
  await sim?.close();
});

const form = (repositories: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ repositories }).toString(),
});

describe('/apps/<slug>/installations/new', () => {
  it('asks someone to sign in first, then installs the App on their account with the repositories named', async () => {
    sim = await createTestSimulator();
    sim.signIn('alice');
    sim.signIn(null);
    const page = `${sim.url}/apps/${sim.app.slug}/installations/new`;
    const anonymous = await fetch(page);
    expect(anonymous.status).toBe(200);
    expect(await anonymous.text()).toContain(`href="/apps/${sim.app.slug}/installations/new?login=alice"`);

    const signedIn = await fetch(`${page}?login=carol`);
    expect(await signedIn.text()).toContain('Signed in as <strong>carol</strong>');
    const empty = await fetch(page, form(' , '));
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('Name at least one repository.');

    const installed = await fetch(page, form('site, docs'));
    expect(installed.status).toBe(201);
    expect(await installed.text()).toContain('Repositories: carol/site, carol/docs');
    const installations = await api(sim, 'GET', '/app/installations', {
      authorization: `Bearer ${await appJwt(sim)}`,
    });
    expect(installations.body).toEqual([
      expect.objectContaining({ account: expect.objectContaining({ login: 'carol', type: 'User' }) }),
    ]);
  });

  it('escapes what it shows, and knows only its own App', async () => {
    sim = await createTestSimulator();
    const unknown = await fetch(`${sim.url}/apps/someone-else/installations/new`);
    expect(unknown.status).toBe(404);
    const hostile = await fetch(`${sim.url}/apps/${sim.app.slug}/installations/new?login=%3Cscript%3E`);
    expect(hostile.status).toBe(400);
    expect(await hostile.text()).not.toContain('<script>');
  });
});
