import Type from 'typebox';
import { isUsageMonth, usageMonth } from '../../domain/usage.js';
import { getUsage } from '../../store/usage.js';
import { topBlockedWorkflows } from '../../store/workflows.js';
import { AUTH_PROBLEMS, BlockedSchema, problems, UsageSchema } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { MANAGEMENT_SECURITY, memberAccount, requireCaller } from '../authenticate.js';
import { HttpError } from '../problem.js';

const security = MANAGEMENT_SECURITY;

/** Usage counters and the provider's blocked-events card. */
export function registerUsageRoutes(api: App, context: Pick<AppContext, 'store' | 'clock'>): void {
  function monthOf(month: string | undefined): string {
    const chosen = month ?? usageMonth(context.clock.now());
    if (!isUsageMonth(chosen)) throw new HttpError('invalid_month', 'month must be YYYY-MM, e.g. 2026-11');
    return chosen;
  }

  api.get(
    '/api/v1/usage',
    {
      schema: {
        summary: 'Usage counters per account and month, in total and per day',
        tags: ['usage'],
        security,
        querystring: Type.Object({
          account: Type.Optional(Type.String()),
          month: Type.Optional(Type.String({ description: 'YYYY-MM (UTC); default: this month' })),
        }),
        response: { 200: UsageSchema, ...problems(AUTH_PROBLEMS, 'account_not_found', 'invalid_month') },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const month = monthOf(request.query.month);
      const accounts = request.query.account
        ? [memberAccount(caller, request.query.account)]
        : caller.accounts;
      return {
        month,
        usage: await Promise.all(
          accounts.map(async (account) => {
            const usage = await getUsage(context.store.db, account.account_id, month, context.clock.now());
            return { account: account.login, month, counters: usage.counters, days: usage.days };
          }),
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
        response: { 200: BlockedSchema, ...problems(AUTH_PROBLEMS, 'account_not_found', 'invalid_month') },
      },
    },
    async (request) => {
      const account = memberAccount(requireCaller(request), request.query.account);
      const month = monthOf(request.query.month);
      const accountId = account.account_id;
      const { counters } = await getUsage(context.store.db, accountId, month, context.clock.now());
      const top = await topBlockedWorkflows(context.store.db, accountId, 10);
      const received = counters.eventsReceived;
      const blocked = counters.eventsBlocked;
      return {
        account: account.login,
        month,
        eventsReceived: received,
        allowedEvents: Math.max(0, received - blocked),
        blockedEvents: blocked,
        blockRate: received === 0 ? null : Math.round((blocked * 10_000) / received) / 100,
        orphanedMessages: counters.messagesOrphaned,
        topWorkflows: top.map((w) => ({
          repository: w.full_name,
          workflow: w.path.split('/').pop() ?? w.path,
          name: w.name,
          blocked: w.blocked_count,
        })),
      };
    },
  );
}
