import Type from 'typebox';
import { AUDIT_ACTIONS, isAuditAction } from '../../domain/audit.js';
import { listAuditEntries } from '../../store/audit.js';
import type { AuditEntryRow } from '../../store/schema.js';
import { AUTH_PROBLEMS, AuditPageSchema, problems } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { MANAGEMENT_SECURITY, memberAccount, requireCaller } from '../authenticate.js';
import { CURSOR_FIELDS, PageQuery, pageOf, readPage } from '../pagination.js';
import { HttpError } from '../problem.js';
import { isoAt } from '../views.js';

/** The audit trail: the changes made to the caller's accounts, newest first. */
export function registerAuditRoutes(api: App, context: Pick<AppContext, 'store'>): void {
  api.get(
    '/api/v1/audit',
    {
      schema: {
        summary: 'Audit trail: changes of configuration on your accounts, newest first',
        tags: ['audit'],
        security: MANAGEMENT_SECURITY,
        querystring: Type.Object({
          account: Type.Optional(Type.String({ description: 'one of your accounts (login); default all' })),
          action: Type.Optional(Type.String({ description: AUDIT_ACTIONS.join(' | ') })),
          target: Type.Optional(
            Type.String({
              maxLength: 300,
              description: 'what was changed: a service, subscription, delivery… id, or owner/repo',
            }),
          ),
          ...PageQuery,
        }),
        response: { 200: AuditPageSchema, ...problems(AUTH_PROBLEMS, 'account_not_found', 'invalid_cursor') },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { account, action, target } = request.query;
      if (action !== undefined && !isAuditAction(action)) {
        throw new HttpError('invalid_request', `action must be one of ${AUDIT_ACTIONS.join(', ')}`);
      }
      const accounts = account ? [memberAccount(caller, account)] : caller.accounts;
      const logins = new Map(accounts.map((a) => [a.account_id, a.login]));
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.id('aud')]);
      const rows = await listAuditEntries(
        context.store.db,
        { accountIds: [...logins.keys()], action, targetId: target },
        store,
      );
      const page = pageOf(rows, limit, (row) => [row.audit_id]);
      return {
        entries: page.items.map((row) =>
          auditEntryView(row, row.account_id === null ? null : (logins.get(row.account_id) ?? null)),
        ),
        nextCursor: page.nextCursor,
      };
    },
  );
}

function auditEntryView(row: AuditEntryRow, account: string | null) {
  const parse = (json: string | null) =>
    json === null ? null : (JSON.parse(json) as Record<string, unknown>);
  return {
    id: row.audit_id,
    account,
    at: isoAt(row.created_at),
    actor: { login: row.actor_login, userId: row.actor_user_id, tokenId: row.actor_token_id },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    before: parse(row.before),
    after: parse(row.after),
  };
}
