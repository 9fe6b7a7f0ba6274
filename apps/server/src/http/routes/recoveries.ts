import Type from 'typebox';
import { newId } from '../../domain/ids.js';
import {
  checkRecoveryWindow,
  DEFAULT_RECOVERY_STATES,
  isRecoverableState,
  RECOVERABLE_STATES,
  type RecoverableState,
} from '../../domain/recovery.js';
import { isActive } from '../../domain/subscription-state.js';
import { recordAudit } from '../../store/audit.js';
import {
  countRecoverable,
  findRecoveryByKey,
  findRunningRecovery,
  finishRecovery,
  getRecovery,
  insertRecovery,
  listRecoveries,
  type RecoveryWindow,
  windowOf,
} from '../../store/recoveries.js';
import type { RecoveryRow } from '../../store/schema.js';
import { isUniqueViolation } from '../../store/store-errors.js';
import {
  AUTH_PROBLEMS,
  CHANGE_PROBLEMS,
  PATH_PROBLEMS,
  problems,
  RecoveryPageSchema,
  RecoveryPreviewSchema,
  RecoverySchema,
} from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { auditActor } from '../audit-actor.js';
import { type Caller, MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { partyConnection } from '../connection-party.js';
import { CURSOR_FIELDS, PageQuery, pageOf, readPage } from '../pagination.js';
import { HttpError } from '../problem.js';
import { isoAt } from '../views.js';

const security = MANAGEMENT_SECURITY;
const ConnectionParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const RecoveryParams = Type.Object({
  id: Type.String({ maxLength: 100 }),
  recoveryId: Type.String({ maxLength: 100 }),
});
const STATES_HELP = `${Object.keys(RECOVERABLE_STATES).join(' | ')} (default ${DEFAULT_RECOVERY_STATES.join(',')})`;

/**
 * Bulk recovery: replay the failed deliveries of a connection since a time, as a
 * background job the worker role runs (delivery/recovery-runner.ts). Either party of the
 * connection may start, follow and cancel one, as either may replay a delivery.
 */
export function registerRecoveryRoutes(api: App, context: Pick<AppContext, 'store' | 'clock'>): void {
  const db = context.store.db;

  async function visibleConnection(caller: Caller, id: string) {
    const party = await partyConnection(db, caller, id);
    if (!party?.service) {
      throw new HttpError('connection_not_found', `no connection ${id} that you are a party to`);
    }
    const { subscription, service } = party;
    return {
      subscription,
      accountIds: [service.account_id, subscription.consumer_account_id],
    };
  }

  function readWindow(subscriptionId: string, since: string, states: string[] | undefined): RecoveryWindow {
    const now = context.clock.now();
    const sinceAt = Date.parse(since);
    if (Number.isNaN(sinceAt)) {
      throw new HttpError(
        'invalid_recovery_window',
        'since must be an ISO 8601 time, e.g. 2026-11-20T00:00:00Z',
      );
    }
    const check = checkRecoveryWindow(sinceAt, now);
    if (!check.ok) throw new HttpError('invalid_recovery_window', check.reason);
    const chosen = states ?? DEFAULT_RECOVERY_STATES;
    const unknown = chosen.filter((state) => !isRecoverableState(state));
    if (chosen.length === 0 || unknown.length > 0) {
      throw new HttpError(
        'invalid_request',
        `states must be a list of ${Object.keys(RECOVERABLE_STATES).join(', ')}`,
      );
    }
    return { subscriptionId, sinceAt, untilAt: now, states: [...new Set(chosen)] as RecoverableState[] };
  }

  async function partyRecovery(caller: Caller, connectionId: string, recoveryId: string) {
    const { accountIds } = await visibleConnection(caller, connectionId);
    const recovery = await getRecovery(db, recoveryId);
    if (!recovery || recovery.subscription_id !== connectionId) {
      throw new HttpError('recovery_not_found', `no recovery ${recoveryId} of connection ${connectionId}`);
    }
    return { recovery, accountIds };
  }

  api.get(
    '/api/v1/connections/:id/recoveries/preview',
    {
      schema: {
        summary: 'How many deliveries a bulk recovery since a time would replay (changes nothing)',
        tags: ['recoveries'],
        security,
        params: ConnectionParams,
        querystring: Type.Object({
          since: Type.String({ description: 'ISO 8601 time, at most 90 days ago' }),
          states: Type.Optional(Type.String({ description: `comma-separated: ${STATES_HELP}` })),
        }),
        response: {
          200: RecoveryPreviewSchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'connection_not_found', 'invalid_recovery_window'),
        },
      },
    },
    async (request) => {
      const { subscription } = await visibleConnection(requireCaller(request), request.params.id);
      const window = readWindow(
        subscription.subscription_id,
        request.query.since,
        request.query.states?.split(','),
      );
      const counts = await countRecoverable(db, window);
      return {
        connectionId: subscription.subscription_id,
        states: window.states,
        since: isoAt(window.sinceAt),
        until: isoAt(window.untilAt),
        ...counts,
      };
    },
  );

  api.post(
    '/api/v1/connections/:id/recoveries',
    {
      schema: {
        summary: 'Start a bulk recovery: replay every failed delivery of the connection since a time',
        description:
          'Runs in the background (worker role); follow it with GET …/recoveries/{recoveryId}. Only while the subscription is approved, one running recovery per connection. A repeated request with the same Idempotency-Key returns the first recovery.',
        tags: ['recoveries'],
        security,
        params: ConnectionParams,
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 200,
              pattern: '^[\\x21-\\x7e]+$',
              description: 'any 1–200 visible ASCII characters; the same key returns the same recovery',
            }),
          ),
        }),
        body: Type.Object(
          {
            since: Type.String({ maxLength: 64, description: 'ISO 8601 time, at most 90 days ago' }),
            states: Type.Optional(
              Type.Array(Type.String({ maxLength: 32 }), { maxItems: 4, description: STATES_HELP }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          202: RecoverySchema,
          ...problems(
            CHANGE_PROBLEMS,
            PATH_PROBLEMS,
            'connection_not_found',
            'invalid_recovery_window',
            'subscription_inactive',
            'recovery_running',
          ),
        },
      },
    },
    async (request, reply) => {
      const caller = requireCaller(request);
      const { subscription, accountIds } = await visibleConnection(caller, request.params.id);
      const key = request.headers['idempotency-key'];
      const byKey = () =>
        key === undefined
          ? Promise.resolve(undefined)
          : findRecoveryByKey(db, {
              requestedBy: caller.user.user_id,
              subscriptionId: subscription.subscription_id,
              idempotencyKey: key,
            });
      const earlier = await byKey();
      if (earlier) return reply.code(202).send(recoveryView(earlier));
      const window = readWindow(subscription.subscription_id, request.body.since, request.body.states);
      if (!isActive(subscription.status)) {
        throw new HttpError(
          'subscription_inactive',
          `the subscription is ${subscription.status}: nothing is sent to its repository any more`,
          { statusCurrent: subscription.status },
        );
      }
      const refuseRunning = (running: RecoveryRow) =>
        new HttpError(
          'recovery_running',
          `recovery ${running.recovery_id} of this connection is still running: wait for it, or cancel it with POST /api/v1/connections/${subscription.subscription_id}/recoveries/${running.recovery_id}/cancel`,
          { recoveryId: running.recovery_id },
        );
      let created: RecoveryRow | undefined;
      // Two rounds: a unique violation means another request's recovery committed first; the
      // second round reads it (and, should it have ended meanwhile, may start this one after all).
      for (let round = 0; created === undefined; round++) {
        try {
          created = await context.store.transaction(async (trx) => {
            const running = await findRunningRecovery(trx, subscription.subscription_id);
            if (running) throw refuseRunning(running);
            const now = context.clock.now();
            const { total } = await countRecoverable(trx, window);
            const row = await insertRecovery(
              trx,
              {
                recoveryId: newId('rec', now),
                window,
                requestedBy: caller.user.user_id,
                idempotencyKey: key ?? null,
                total,
              },
              now,
            );
            await recordAudit(
              trx,
              {
                actor: auditActor(caller),
                accountIds,
                action: 'recovery.start',
                target: { type: 'recovery', id: row.recovery_id },
                after: {
                  connection: subscription.subscription_id,
                  since: isoAt(window.sinceAt),
                  states: window.states,
                  total,
                },
              },
              now,
            );
            return row;
          });
        } catch (error) {
          // Requests that arrived at once: one recovery per connection runs (a unique index), and
          // a repeated key returns the recovery of the request that committed first.
          if (!isUniqueViolation(error)) throw error;
          created = await byKey();
          if (created) break;
          const running = await findRunningRecovery(db, subscription.subscription_id);
          if (running) throw refuseRunning(running);
          if (round > 0) throw error;
        }
      }
      return reply.code(202).send(recoveryView(created));
    },
  );

  api.get(
    '/api/v1/connections/:id/recoveries',
    {
      schema: {
        summary: 'Bulk recoveries of a connection, newest first, with their progress',
        tags: ['recoveries'],
        security,
        params: ConnectionParams,
        querystring: Type.Object(PageQuery),
        response: {
          200: RecoveryPageSchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'connection_not_found', 'invalid_cursor'),
        },
      },
    },
    async (request) => {
      const { subscription } = await visibleConnection(requireCaller(request), request.params.id);
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.id('rec')]);
      const page = pageOf(await listRecoveries(db, subscription.subscription_id, store), limit, (row) => [
        row.recovery_id,
      ]);
      return { recoveries: page.items.map(recoveryView), nextCursor: page.nextCursor };
    },
  );

  api.get(
    '/api/v1/connections/:id/recoveries/:recoveryId',
    {
      schema: {
        summary: 'One bulk recovery and its progress',
        tags: ['recoveries'],
        security,
        params: RecoveryParams,
        response: {
          200: RecoverySchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'connection_not_found', 'recovery_not_found'),
        },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { recovery } = await partyRecovery(caller, request.params.id, request.params.recoveryId);
      return recoveryView(recovery);
    },
  );

  api.post(
    '/api/v1/connections/:id/recoveries/:recoveryId/cancel',
    {
      schema: {
        summary: 'Cancel a running bulk recovery: deliveries it replayed stay replayed, no more are',
        tags: ['recoveries'],
        security,
        params: RecoveryParams,
        response: {
          200: RecoverySchema,
          ...problems(
            CHANGE_PROBLEMS,
            PATH_PROBLEMS,
            'connection_not_found',
            'recovery_not_found',
            'recovery_finished',
          ),
        },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { recovery, accountIds } = await partyRecovery(
        caller,
        request.params.id,
        request.params.recoveryId,
      );
      const cancelled = await context.store.transaction(async (trx) => {
        const now = context.clock.now();
        if (!(await finishRecovery(trx, recovery.recovery_id, 'cancelled', now))) return false;
        const current = (await getRecovery(trx, recovery.recovery_id))!;
        await recordAudit(
          trx,
          {
            actor: auditActor(caller),
            accountIds,
            action: 'recovery.cancel',
            target: { type: 'recovery', id: recovery.recovery_id },
            before: { status: 'running' },
            after: { status: 'cancelled', replayed: current.replayed, skipped: current.skipped },
          },
          now,
        );
        return true;
      });
      const current = (await getRecovery(db, recovery.recovery_id))!;
      if (!cancelled) {
        throw new HttpError(
          'recovery_finished',
          `recovery ${recovery.recovery_id} is ${current.status} already`,
          {
            statusCurrent: current.status,
          },
        );
      }
      return recoveryView(current);
    },
  );
}

function recoveryView(row: RecoveryRow) {
  const window = windowOf(row);
  return {
    id: row.recovery_id,
    connectionId: row.subscription_id,
    status: row.status,
    states: window.states,
    since: isoAt(window.sinceAt),
    until: isoAt(window.untilAt),
    total: row.total,
    replayed: row.replayed,
    skipped: row.skipped,
    createdAt: isoAt(row.created_at),
    finishedAt: row.finished_at === null ? null : isoAt(row.finished_at),
  };
}
