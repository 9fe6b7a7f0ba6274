import Type from 'typebox';
import { ALERT_SEND_FAILURES, type AlertSendFailure } from '../../domain/alerts.js';
import { listAlerts } from '../../store/alerts.js';
import { AlertPageSchema, AUTH_PROBLEMS, problems } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { MANAGEMENT_SECURITY, memberAccount, requireCaller } from '../authenticate.js';
import { CURSOR_FIELDS, PageQuery, pageOf, readPage } from '../pagination.js';

/** `GET /api/v1/alerts`: the operational alerts of the caller's accounts, newest first. */
export function registerAlertRoutes(api: App, context: Pick<AppContext, 'store'>): void {
  api.get(
    '/api/v1/alerts',
    {
      schema: {
        summary: "Operational alerts of the caller's accounts, newest first",
        tags: ['alerts'],
        security: MANAGEMENT_SECURITY,
        querystring: Type.Object({
          account: Type.Optional(Type.String({ description: 'only this account (login)' })),
          ...PageQuery,
        }),
        response: {
          200: AlertPageSchema,
          ...problems(AUTH_PROBLEMS, 'account_not_found', 'invalid_request', 'invalid_cursor'),
        },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const accounts = request.query.account
        ? [memberAccount(caller, request.query.account)]
        : caller.accounts;
      const logins = new Map(accounts.map((a) => [a.account_id, a.login]));
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.time, CURSOR_FIELDS.id('alrt')]);
      const rows = await listAlerts(context.store.db, [...logins.keys()], store);
      const page = pageOf(rows, limit, (row) => [String(row.created_at), row.alert_id]);
      return {
        alerts: page.items.map((row) => ({
          id: row.alert_id,
          account: logins.get(row.account_id) ?? '',
          kind: row.kind,
          status: row.status,
          attempts: row.attempts,
          lastError: sendFailureOf(row.last_error),
          createdAt: new Date(row.created_at).toISOString(),
          sentAt: row.sent_at === null ? null : new Date(row.sent_at).toISOString(),
          data: (JSON.parse(row.payload) as { data: Record<string, unknown> }).data,
        })),
        nextCursor: page.nextCursor,
      };
    },
  );
}

/**
 * The category of the last failed send. Rows are written as categories; anything else (written by
 * an older version during an upgrade) is shown as `unreachable`, never as the text it holds.
 */
function sendFailureOf(lastError: string | null): AlertSendFailure | null {
  if (lastError === null) return null;
  return Object.hasOwn(ALERT_SEND_FAILURES, lastError) ? (lastError as AlertSendFailure) : 'unreachable';
}
