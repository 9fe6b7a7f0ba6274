import { requireLogin } from './logins.js';
import type { SimContext } from './sim-context.js';
import { SimInputError, SimNotFoundError } from './sim-input-error.js';

/**
 * `renameAccount`: a user or organisation changes its login, as on github.com. The account keeps
 * its id; the old login is free at once, and the next `getOrCreateAccount` of it is a different
 * account with a new id — GitHub recycles logins. https://docs.github.com/account-and-profile/changing-your-username
 */
export function renameAccount(ctx: SimContext, login: string, newLogin: string): void {
  const account = ctx.state.accounts.get(String(login).toLowerCase());
  if (account === undefined) throw new SimNotFoundError(`no account ${JSON.stringify(login)}`);
  const next = requireLogin(newLogin, 'new login');
  const taken = ctx.state.accounts.get(next.toLowerCase());
  if (taken !== undefined && taken !== account) {
    throw new SimInputError(`the login ${next} belongs to another account`);
  }
  ctx.state.accounts.delete(account.login.toLowerCase());
  account.login = next;
  ctx.state.accounts.set(next.toLowerCase(), account);
}
