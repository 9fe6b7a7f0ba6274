import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenForLogin } from '../../src/cli/token.js';
import { type Harness, startHarness } from '../support/harness.js';
import { OAuthBrowser } from '../support/oauth-browser.js';

/**
 * A console user is the numeric GitHub id. GitHub recycles logins: a
 * different person who later holds a login must not inherit anything of its former holder.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ transport: 'inject' });
  await h.sim.createInstallation({
    account: { login: 'acme', type: 'Organization' },
    repositories: ['api'],
    sender: { login: 'alice' },
  });
  await h.sim.createInstallation({
    account: { login: 'globex', type: 'Organization' },
    repositories: ['app'],
    sender: { login: 'bob' },
  });
});
afterAll(async () => {
  await h.close();
});

const accountsOf = async (browser: OAuthBrowser) =>
  ((await (await browser.get('/api/v1/me')).json()) as { accounts: Array<{ login: string }> }).accounts.map(
    (a) => a.login,
  );

describe('users are their GitHub id', () => {
  it('gives a recycled login nothing of its former holder, through the login or an installation', async () => {
    // alice installed acme; an operator also made her a member of globex.
    const operatorToken = (await createTokenForLogin(h.zekt.store, { login: 'alice', account: 'globex' }))
      .token;
    const original = new OAuthBrowser(h.url);
    await original.logIn('alice');
    expect(await accountsOf(original)).toEqual(['acme', 'globex']);

    // alice renames herself on GitHub; someone else takes the login "alice".
    h.sim.renameAccount('alice', 'alice-renamed');
    const newcomer = new OAuthBrowser(h.url);
    expect((await newcomer.logIn('alice')).status).toBe(302);
    expect(await accountsOf(newcomer)).toEqual([]);
    const me = (await (await newcomer.get('/api/v1/me')).json()) as { user: { id: number } };

    // The newcomer installs the App on an account of theirs: their membership, not alice's.
    await h.sim.createInstallation({
      account: { login: 'initech', type: 'Organization' },
      repositories: ['tps'],
      sender: { login: 'alice' },
    });
    const viaOperatorToken = await h.call('GET', '/api/v1/me', { token: operatorToken });
    expect(viaOperatorToken.body.accounts.map((a: { login: string }) => a.login)).toEqual(['acme', 'globex']);
    expect(viaOperatorToken.body.user.id).not.toBe(me.user.id);
    expect(await accountsOf(newcomer)).toEqual(['initech']);

    // The real alice, under her new login, is still herself.
    const renamed = new OAuthBrowser(h.url);
    await renamed.logIn('alice-renamed');
    expect(await accountsOf(renamed)).toEqual(['acme', 'globex']);
    const users = await h.zekt.store.db.selectFrom('users').select(['github_id', 'login']).execute();
    expect(new Set(users.map((u) => Number(u.github_id))).size).toBe(users.length);
  });
});
