import { generateApiToken, hashApiToken } from '../security/api-tokens.js';
import { getAccountByLogin } from '../store/accounts.js';
import { recordAudit } from '../store/audit.js';
import type { Store } from '../store/store.js';
import {
  addMembership,
  createApiToken,
  getUserByLogin,
  listMemberAccounts,
  upsertUser,
} from '../store/users.js';
import { CliError } from './cli-error.js';

/**
 * `zekt token create`: an operator issues an API token for a GitHub login, optionally adding the
 * login as a member of an installed account. Only the token's hash is stored.
 */
export async function createTokenForLogin(
  store: Store,
  input: {
    login: string;
    account?: string | undefined;
    name?: string | undefined;
    now?: number;
    /**
     * `refuse` (the operator's command): a login Zekt has never seen is refused, since its token
     * would act for nobody Zekt knows; `create` (demo and test setups) makes the user.
     */
    unknownLogin?: 'refuse' | 'create';
    /** Where the console is, for the message that refuses an unknown login. */
    consoleUrl?: string | null;
  },
): Promise<{ token: string; login: string; account: string | null }> {
  const now = input.now ?? Date.now();
  return store.transaction(async (trx) => {
    const known = await getUserByLogin(trx, input.login);
    if (!known && input.unknownLogin === 'refuse') {
      throw new CliError(
        `Zekt has never seen the GitHub login ${input.login}: log in to the console once as ${input.login} (${input.consoleUrl ? `${input.consoleUrl.replace(/\/+$/, '')}/auth/login` : '/auth/login of ZEKT_BASE_URL'}), or install the Zekt GitHub App as that user; then run this again`,
      );
    }
    const user = known ?? (await upsertUser(trx, { login: input.login }, now));
    let accountLogin: string | null = null;
    if (input.account) {
      const account = await getAccountByLogin(trx, input.account);
      if (!account || account.uninstalled_at !== null) {
        throw new CliError(`no installed account ${input.account}: install the Zekt GitHub App on it first`);
      }
      await addMembership(trx, user.user_id, account.account_id, 'operator', now);
      accountLogin = account.login;
    }
    const token = generateApiToken();
    const name = input.name ?? 'cli';
    const tokenId = await createApiToken(
      trx,
      { userId: user.user_id, tokenHash: hashApiToken(token), name },
      now,
    );
    // Every account the token may act for sees that it was issued, and by whom: the operator's CLI.
    await recordAudit(
      trx,
      {
        actor: { userId: null, login: 'zekt token create', tokenId: null },
        accountIds: (await listMemberAccounts(trx, user.user_id)).map((a) => a.account_id),
        action: 'token.create',
        target: { type: 'token', id: tokenId },
        after: { login: user.login, name },
      },
      now,
    );
    return { token, login: user.login, account: accountLogin };
  });
}
