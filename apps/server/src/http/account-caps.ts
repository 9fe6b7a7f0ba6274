import type { Kysely } from 'kysely';
import type { AccountLimits } from '../config.js';
import { type CappedKind, countOfAccount, lockAccount } from '../store/account-caps.js';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { HttpError } from './problem.js';

/**
 * Per-account caps: one tenant cannot grow the store without bound. `work`
 * creates one more of `kind` for the account, in the transaction that counted them.
 */
const CAPS: Record<CappedKind, { limit: keyof AccountLimits; what: string; setting: string }> = {
  services: { limit: 'servicesPerAccount', what: 'services', setting: 'ZEKT_MAX_SERVICES_PER_ACCOUNT' },
  workflows: { limit: 'workflowsPerAccount', what: 'workflows', setting: 'ZEKT_MAX_WORKFLOWS_PER_ACCOUNT' },
  pendingRequests: {
    limit: 'pendingRequestsPerAccount',
    what: 'subscription requests waiting for a decision',
    setting: 'ZEKT_MAX_PENDING_REQUESTS_PER_ACCOUNT',
  },
};

export function withinAccountCap<T>(
  context: { store: Store; limits: AccountLimits },
  kind: CappedKind,
  accountId: number,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  const cap = CAPS[kind];
  const limit = context.limits[cap.limit];
  return context.store.transaction(async (trx) => {
    await lockAccount(trx, context.store.dialect, accountId);
    if ((await countOfAccount(trx, kind, accountId)) >= limit) {
      throw new HttpError(
        'limit_reached',
        `this account has ${limit} ${cap.what}, as many as this deployment allows (${cap.setting}); remove some first`,
        { limit },
      );
    }
    return work(trx);
  });
}
