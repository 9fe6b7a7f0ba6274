import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../domain/clock.js';
import { hashApiToken, looksLikeApiToken } from '../security/api-tokens.js';
import type { AccountRow, UserRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { findUserByTokenHash, listMemberAccounts } from '../store/users.js';
import { HttpError } from './problem.js';

/**
 * Who is calling the management API, and which accounts they may act for. Every management query
 * is scoped by `accounts`; an object of any other account is answered 404, as if it did not exist.
 */
export interface Caller {
  user: UserRow;
  accounts: AccountRow[];
}

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
}

export function requireCaller(request: FastifyRequest): Caller {
  if (!request.caller)
    throw new HttpError(401, 'unauthenticated', 'send an API token: Authorization: Bearer zkt_…');
  return request.caller;
}

/** Adds bearer-token authentication to every route of `app` (an encapsulated plugin scope). */
export function authenticateApiTokens(app: FastifyInstance, deps: { store: Store; clock: Clock }): void {
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
    if (!match) {
      throw new HttpError(
        401,
        'unauthenticated',
        'send an API token: Authorization: Bearer zkt_… (create one with `zekt token create --login <user>`)',
      );
    }
    const token = match[1]!;
    const user = looksLikeApiToken(token)
      ? await findUserByTokenHash(deps.store.db, hashApiToken(token))
      : undefined;
    if (!user) throw new HttpError(401, 'invalid_token', 'the API token is unknown or revoked');
    const accounts = (await listMemberAccounts(deps.store.db, user.user_id)).filter(
      (a) => a.uninstalled_at === null,
    );
    request.caller = { user, accounts };
  });
}

/** The member account with this login, or 404 — also when it exists but the caller is not a member. */
export function memberAccount(caller: Caller, login: string): AccountRow {
  const account = caller.accounts.find((a) => a.login.toLowerCase() === login.toLowerCase());
  if (!account) throw new HttpError(404, 'account_not_found', `no account ${login} that you are a member of`);
  return account;
}

export function isMemberOf(caller: Caller, accountId: number): boolean {
  return caller.accounts.some((a) => Number(a.account_id) === Number(accountId));
}
