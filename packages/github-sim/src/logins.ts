import type { SimContext } from './sim-context.js';
import { SimInputError } from './sim-input-error.js';
import type { AccountRecord } from './sim-state.js';

/** The shape of a GitHub login: letters, digits and hyphens, not at either end. */
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;

export function isLogin(value: unknown): value is string {
  return typeof value === 'string' && LOGIN.test(value);
}

export function requireLogin(login: unknown, what: string): string {
  if (!isLogin(login)) {
    throw new SimInputError(
      `${what} must be a GitHub login (letters, digits and inner hyphens); got ${JSON.stringify(login)}`,
    );
  }
  return login;
}

/**
 * The user account with this login, created when unknown. Organisations and bots cannot sign in or
 * join organisations, so their logins are refused.
 */
export function userAccount(ctx: SimContext, login: unknown, what: string): AccountRecord {
  const account = ctx.state.getOrCreateAccount(requireLogin(login, what), 'User');
  if (account.type !== 'User') {
    throw new SimInputError(
      `${what}: ${account.login} is an ${account.type === 'Bot' ? 'App bot' : 'organisation'}, not a user`,
    );
  }
  return account;
}
