import Type from 'typebox';
import { REPLAY_LIMIT, replayDelivery } from '../../delivery/replay.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../domain/delivery-state.js';
import { isDeliveryId } from '../../domain/ids.js';
import { getArchive } from '../../store/archives.js';
import { listAttempts } from '../../store/deliveries/index.js';
import { getDeliveryRecord, listDeliveryRecords } from '../../store/delivery-records.js';
import {
  AUTH_PROBLEMS,
  CHANGE_PROBLEMS,
  DeliveryPageSchema,
  DeliveryPayloadSchema,
  DeliveryRecordSchema,
  PATH_PROBLEMS,
  problems,
} from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { auditActor } from '../audit-actor.js';
import { type Caller, MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { isPartyToDelivery } from '../connection-party.js';
import { readLimit } from '../pagination.js';
import { HttpError } from '../problem.js';
import { deliveryRecordView, isoAt } from '../views.js';

const security = MANAGEMENT_SECURITY;
const DeliveryParams = Type.Object({ deliveryId: Type.String({ maxLength: 100 }) });

function parseTime(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new HttpError('invalid_request', `${name} must be an ISO 8601 time, e.g. 2026-11-20T00:00:00Z`);
  }
  return ms;
}

/** Delivery Status and replay. */
export function registerDeliveryRoutes(
  api: App,
  context: Pick<AppContext, 'store' | 'clock' | 'wakeDispatcher' | 'tracer'>,
): void {
  const db = context.store.db;

  async function partyRecord(caller: Caller, deliveryId: string) {
    const row = await getDeliveryRecord(db, deliveryId);
    if (!row || !isPartyToDelivery(caller, row)) {
      throw new HttpError('delivery_not_found', `no delivery ${deliveryId} of your connections`);
    }
    return row;
  }

  api.get(
    '/api/v1/deliveries',
    {
      schema: {
        summary: 'Delivery status: deliveries of your connections, newest first',
        tags: ['deliveries'],
        security,
        querystring: Type.Object({
          connection: Type.Optional(Type.String({ description: 'a connection (subscription) id' })),
          status: Type.Optional(Type.String({ description: DELIVERY_STATUSES.join(' | ') })),
          notStarted: Type.Optional(
            Type.Literal('true', {
              description:
                'only deliveries flagged not started (GitHub accepted them, no consumer workflow started) and still Dispatched',
            }),
          ),
          side: Type.Optional(
            Type.Union([Type.Literal('provider'), Type.Literal('consumer')], {
              description:
                "provider: deliveries of your services' runs; consumer: deliveries to your repositories",
            }),
          ),
          repository: Type.Optional(
            Type.String({
              maxLength: 200,
              description: 'owner/repo: the provider or the consumer repository',
            }),
          ),
          runId: Type.Optional(
            Type.String({ maxLength: 40, description: "the provider's run id (correlationId)" }),
          ),
          since: Type.Optional(Type.String({ description: 'ISO 8601 time: dispatched at or after' })),
          until: Type.Optional(Type.String({ description: 'ISO 8601 time: dispatched before' })),
          cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
          limit: Type.Optional(Type.String({ description: '1–100 (default 50)' })),
        }),
        response: { 200: DeliveryPageSchema, ...problems(AUTH_PROBLEMS, 'invalid_cursor') },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { connection, status, notStarted, side, repository, runId, cursor } = request.query;
      if (status !== undefined && !DELIVERY_STATUSES.includes(status as DeliveryStatus)) {
        throw new HttpError('invalid_request', `status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      }
      const pageSize = readLimit(request.query.limit);
      if (cursor !== undefined && !isDeliveryId(cursor)) {
        throw new HttpError('invalid_cursor', 'cursor must be the nextCursor of a previous page');
      }
      const rows = await listDeliveryRecords(db, {
        accountIds: caller.accounts.map((a) => a.account_id),
        subscriptionId: connection,
        status: status as DeliveryStatus | undefined,
        notStarted: notStarted === 'true',
        side,
        repository,
        correlationId: runId,
        since: parseTime('since', request.query.since),
        until: parseTime('until', request.query.until),
        before: cursor,
        limit: pageSize + 1,
      });
      // Delivery ids sort by creation time: the last id shown is the cursor.
      const page = rows.slice(0, pageSize);
      return {
        deliveries: page.map((row) => deliveryRecordView(row)),
        nextCursor: rows.length > pageSize ? page[page.length - 1]!.delivery_id : null,
      };
    },
  );

  api.get(
    '/api/v1/deliveries/:deliveryId',
    {
      schema: {
        summary: 'One delivery record with its attempts',
        tags: ['deliveries'],
        security,
        params: DeliveryParams,
        response: {
          200: DeliveryRecordSchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'delivery_not_found'),
        },
      },
    },
    async (request) => {
      const row = await partyRecord(requireCaller(request), request.params.deliveryId);
      return deliveryRecordView(row, await listAttempts(db, row.delivery_id));
    },
  );

  api.get(
    '/api/v1/deliveries/:deliveryId/payload',
    {
      schema: {
        summary: 'What a delivery carried: the run (event) and the provider’s message, from the archive',
        tags: ['deliveries'],
        security,
        params: DeliveryParams,
        response: {
          200: DeliveryPayloadSchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'delivery_not_found', 'archive_expired'),
        },
      },
    },
    async (request) => {
      const row = await partyRecord(requireCaller(request), request.params.deliveryId);
      const archive = await getArchive(db, row.event_id);
      if (!archive || archive.expires_at < context.clock.now()) {
        throw new HttpError(
          'archive_expired',
          `the archived payload of ${row.delivery_id} has expired (archives are kept 90 days)`,
        );
      }
      const hasMessage = Boolean(archive.has_message) && archive.payload !== null;
      return {
        deliveryId: row.delivery_id,
        event: JSON.parse(archive.summary) as Record<string, unknown>,
        payload: hasMessage ? (JSON.parse(archive.payload!) as unknown) : null,
        hasMessage,
        archivedAt: isoAt(archive.archived_at),
        expiresAt: isoAt(archive.expires_at),
      };
    },
  );

  api.post(
    '/api/replay/:deliveryId',
    {
      schema: {
        summary: 'Re-dispatch the archived payload of a delivery as a new delivery',
        description:
          'Only while the subscription is approved; at most 10 replays of a delivery an hour. A repeated request with the same Idempotency-Key returns the first replay.',
        tags: ['deliveries'],
        security,
        params: DeliveryParams,
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 200,
              pattern: '^[\\x21-\\x7e]+$',
              description: 'any 1–200 visible ASCII characters; the same key returns the same replay',
            }),
          ),
        }),
        response: {
          202: DeliveryRecordSchema,
          ...problems(
            CHANGE_PROBLEMS,
            PATH_PROBLEMS,
            'delivery_not_found',
            'archive_expired',
            'subscription_inactive',
            'replay_limit_reached',
            'replay_conflict',
          ),
        },
      },
    },
    async (request, reply) => {
      const caller = requireCaller(request);
      const result = await replayDelivery(
        context,
        {
          deliveryId: request.params.deliveryId,
          requestedBy: caller.user.user_id,
          idempotencyKey: request.headers['idempotency-key'],
          actor: auditActor(caller),
        },
        (delivery) => isPartyToDelivery(caller, delivery),
      );
      if (result.outcome === 'not_found') {
        throw new HttpError(
          'delivery_not_found',
          `no delivery ${request.params.deliveryId} of your connections`,
        );
      }
      if (result.outcome === 'subscription_inactive') {
        throw new HttpError(
          'subscription_inactive',
          `the subscription of ${request.params.deliveryId} is ${result.status ?? 'gone'}: nothing is sent to its repository any more`,
          { statusCurrent: result.status },
        );
      }
      if (result.outcome === 'limited') {
        const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
        throw new HttpError(
          'replay_limit_reached',
          `${request.params.deliveryId} was replayed ${REPLAY_LIMIT} times in the last hour; try again in ${seconds} s`,
          {},
          { headers: { 'retry-after': String(seconds) } },
        );
      }
      if (result.outcome === 'archive_expired') {
        throw new HttpError(
          'archive_expired',
          `the archived payload of ${request.params.deliveryId} has expired (archives are kept 90 days); it cannot be replayed`,
        );
      }
      if (result.outcome === 'conflict') {
        throw new HttpError(
          'replay_conflict',
          `${request.params.deliveryId} was replayed${result.replayId ? ` as ${result.replayId}` : ''} while this request was handled, so it was not replayed a second time; ask again to send it once more`,
          { replayId: result.replayId },
        );
      }
      context.wakeDispatcher();
      return reply.code(202).send(deliveryRecordView((await getDeliveryRecord(db, result.replayId))!));
    },
  );
}
