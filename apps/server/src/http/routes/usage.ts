import Type from 'typebox';
import { isUsageMonth, usageMonth } from '../../domain/usage.js';
import { getUsage } from '../../store/usage.js';
import { topBlockedWorkflows } from '../../store/workflows.js';
import type { App, AppContext } from '../app.js';
import { MANAGEMENT_SECURITY, memberAccount, requireCaller } from '../authenticate.js';
import { HttpError } from '../problem.js';

const security = MANAGEMENT_SECURITY;

/** Usage counters (SPEC 8) and the provider's blocked-events card. */
export function registerUsageRoutes(api: App, context: AppContext): void {
  api.get(
    '/api/v1/usage',
    {
      schema: {
        summary: 'Usage counters per account and month',
        tags: ['usage'],
        security,
        querystring: Type.Object({
          account: Type.Optional(Type.String()),
          month: Type.Optional(Type.String({ description: 'YYYY-MM (UTC); default: this month' })),
        }),
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const month = request.query.month ?? usageMonth(context.clock.now());
      if (!isUsageMonth(month))
        throw new HttpError(400, 'invalid_month', 'month must be YYYY-MM, e.g. 2026-11');
      const accounts = request.query.account
        ? [memberAccount(caller, request.query.account)]
        : caller.accounts;
      return {
        month,
        usage: await Promise.all(
          accounts.map(async (account) => ({
            account: account.login,
            month,
            counters: await getUsage(context.store.db, Number(account.account_id), month),
          })),
        ),
      };
    },
  );

  api.get(
    '/api/v1/blocked',
    {
      schema: {
        summary: 'Blocked events of a provider account: counts, top workflows, orphaned messages',
        tags: ['usage'],
        security,
        querystring: Type.Object({ account: Type.String(), month: Type.Optional(Type.String()) }),
      },
    },
    async (request) => {
      const account = memberAccount(requireCaller(request), request.query.account);
      const month = request.query.month ?? usageMonth(context.clock.now());
      if (!isUsageMonth(month))
        throw new HttpError(400, 'invalid_month', 'month must be YYYY-MM, e.g. 2026-11');
      const accountId = Number(account.account_id);
      const usage = await getUsage(context.store.db, accountId, month);
      const top = await topBlockedWorkflows(context.store.db, accountId, 10);
      return {
        account: account.login,
        month,
        blockedEvents: usage.events_blocked,
        orphanedMessages: usage.messages_orphaned,
        topWorkflows: top.map((w) => ({
          repository: w.full_name,
          workflow: w.path.split('/').pop(),
          name: w.name,
          blocked: Number(w.blocked_count),
        })),
      };
    },
  );
}
