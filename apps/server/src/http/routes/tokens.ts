import Type from 'typebox';
import { isExpired, MAX_TOKEN_NAME_LENGTH, tokenExpiry } from '../../domain/api-tokens.js';
import { generateApiToken, hashApiToken } from '../../security/api-tokens.js';
import { type ApiTokenRow, listUserTokens, revokeUserToken } from '../../store/api-tokens.js';
import { recordAudit } from '../../store/audit.js';
import { createApiToken } from '../../store/users.js';
import { AUTH_PROBLEMS, CHANGE_PROBLEMS, PATH_PROBLEMS, problems } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { auditActor } from '../audit-actor.js';
import { type Caller, MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { CURSOR_FIELDS, PageQuery, pageOf, readPage } from '../pagination.js';
import { HttpError } from '../problem.js';
import { ApiTokenPageSchema, CreatedApiTokenSchema } from '../settings-schemas.js';
import { isoAt } from '../views.js';

/**
 * `POST / GET / DELETE /api/v1/tokens`: a person's own API tokens (Settings › API tokens). A token
 * acts as its creator, for every account they are a member of; the secret is answered once, only
 * its SHA-256 is kept; creating and revoking are audited on each of the creator's accounts.
 */
export function registerTokenRoutes(api: App, context: Pick<AppContext, 'store' | 'clock'>): void {
  api.post(
    '/api/v1/tokens',
    {
      schema: {
        summary: 'Create an API token acting as you (the secret is answered once)',
        tags: ['tokens'],
        security: MANAGEMENT_SECURITY,
        body: Type.Object(
          {
            name: Type.String({
              minLength: 1,
              maxLength: MAX_TOKEN_NAME_LENGTH,
              description: 'what the token is for, e.g. "release pipeline"',
            }),
            expiresAt: Type.String({
              maxLength: 64,
              description: 'ISO 8601 time in the future, at most 366 days ahead',
            }),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedApiTokenSchema, ...problems(CHANGE_PROBLEMS, 'invalid_expiry') },
      },
    },
    async (request, reply) => {
      const caller = requireCaller(request);
      const now = context.clock.now();
      const name = request.body.name.trim();
      if (name === '') throw new HttpError('invalid_request', 'name must not be blank');
      const expiry = tokenExpiry(request.body.expiresAt, now);
      if (!expiry.ok) throw new HttpError('invalid_expiry', expiry.reason);
      const token = generateApiToken();
      const tokenId = await context.store.transaction(async (trx) => {
        const id = await createApiToken(
          trx,
          {
            userId: caller.user.user_id,
            tokenHash: hashApiToken(token),
            name,
            expiresAt: expiry.expiresAtMs,
          },
          now,
        );
        await recordAudit(
          trx,
          {
            actor: auditActor(caller),
            accountIds: caller.accounts.map((a) => a.account_id),
            action: 'token.create',
            target: { type: 'token', id },
            after: { login: caller.user.login, name, expiresAt: isoAt(expiry.expiresAtMs) },
          },
          now,
        );
        return id;
      });
      return reply.code(201).send({
        ...tokenView({ token_id: tokenId, name, created_at: now, expires_at: expiry.expiresAtMs }, now),
        token,
      });
    },
  );

  api.get(
    '/api/v1/tokens',
    {
      schema: {
        summary: 'Your API tokens that are not revoked (expired ones included), newest first',
        tags: ['tokens'],
        security: MANAGEMENT_SECURITY,
        querystring: Type.Object(PageQuery),
        response: { 200: ApiTokenPageSchema, ...problems(AUTH_PROBLEMS, 'invalid_cursor') },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.id('tok')]);
      const rows = await listUserTokens(context.store.db, caller.user.user_id, store);
      const page = pageOf(rows, limit, (row) => [row.token_id]);
      const now = context.clock.now();
      return {
        tokens: page.items.map((row) => ({
          ...tokenView(row, now),
          current: row.token_id === caller.tokenId,
        })),
        nextCursor: page.nextCursor,
      };
    },
  );

  api.delete(
    '/api/v1/tokens/:tokenId',
    {
      schema: {
        summary: 'Revoke one of your API tokens (at once: its next request is refused)',
        tags: ['tokens'],
        security: MANAGEMENT_SECURITY,
        params: Type.Object({ tokenId: Type.String({ maxLength: 100 }) }),
        response: {
          204: Type.Null({ description: 'revoked' }),
          ...problems(CHANGE_PROBLEMS, PATH_PROBLEMS, 'token_not_found'),
        },
      },
    },
    async (request, reply) => {
      const caller = requireCaller(request);
      await revoke(context, caller, request.params.tokenId);
      return reply.code(204).send(null);
    },
  );
}

async function revoke(context: Pick<AppContext, 'store' | 'clock'>, caller: Caller, tokenId: string) {
  const revoked = await context.store.transaction(async (trx) => {
    const now = context.clock.now();
    const token = await revokeUserToken(trx, caller.user.user_id, tokenId, now);
    if (!token) return false;
    await recordAudit(
      trx,
      {
        actor: auditActor(caller),
        accountIds: caller.accounts.map((a) => a.account_id),
        action: 'token.revoke',
        target: { type: 'token', id: tokenId },
        before: { name: token.name },
        after: { revoked: true },
      },
      now,
    );
    return true;
  });
  if (!revoked) {
    throw new HttpError(
      'token_not_found',
      `you have no unrevoked API token ${tokenId}: GET /api/v1/tokens lists yours`,
    );
  }
}

function tokenView(row: ApiTokenRow, now: number) {
  return {
    id: row.token_id,
    name: row.name,
    createdAt: isoAt(row.created_at),
    expiresAt: row.expires_at === null ? null : isoAt(row.expires_at),
    expired: isExpired(row.expires_at, now),
  };
}
