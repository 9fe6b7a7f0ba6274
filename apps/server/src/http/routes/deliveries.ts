import Type from 'typebox';
import { replayDelivery } from '../../delivery/replay.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../domain/delivery-state.js';
import { isDeliveryId } from '../../domain/ids.js';
import { listAttempts } from '../../store/deliveries.js';
import { getDeliveryRecord, listDeliveryRecords } from '../../store/delivery-records.js';
import type { DeliveryRow } from '../../store/schema.js';
import type { App, AppContext } from '../app.js';
import { type Caller, isMemberOf, MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { HttpError } from '../problem.js';
import { deliveryRecordView } from '../views.js';

const security = MANAGEMENT_SECURITY;
const MAX_PAGE = 100;

/** A party to a delivery: a member of its provider or its consumer account. */
export function isParty(
  caller: Caller,
  delivery: Pick<DeliveryRow, 'provider_account_id' | 'consumer_account_id'>,
): boolean {
  return (
    isMemberOf(caller, Number(delivery.provider_account_id)) ||
    isMemberOf(caller, Number(delivery.consumer_account_id))
  );
}

/** Delivery Status (SPEC 9) and replay (SPEC 7). */
export function registerDeliveryRoutes(api: App, context: AppContext): void {
  const db = context.store.db;

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
          since: Type.Optional(Type.String({ description: 'ISO 8601 time: dispatched at or after' })),
          cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
          limit: Type.Optional(Type.String({ description: `1–${MAX_PAGE} (default 50)` })),
        }),
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { connection, status, since, cursor, limit } = request.query;
      if (status !== undefined && !DELIVERY_STATUSES.includes(status as DeliveryStatus)) {
        throw new HttpError(400, 'invalid_request', `status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      }
      const sinceMs = since === undefined ? undefined : Date.parse(since);
      if (sinceMs !== undefined && Number.isNaN(sinceMs)) {
        throw new HttpError(
          400,
          'invalid_request',
          'since must be an ISO 8601 time, e.g. 2026-11-20T00:00:00Z',
        );
      }
      const pageSize = limit === undefined ? 50 : Number(limit);
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE) {
        throw new HttpError(400, 'invalid_request', `limit must be a whole number from 1 to ${MAX_PAGE}`);
      }
      if (cursor !== undefined && !isDeliveryId(cursor)) {
        throw new HttpError(400, 'invalid_cursor', 'cursor must be the nextCursor of a previous page');
      }
      const rows = await listDeliveryRecords(db, {
        accountIds: caller.accounts.map((a) => Number(a.account_id)),
        subscriptionId: connection,
        status: status as DeliveryStatus | undefined,
        since: sinceMs,
        before: cursor,
        limit: pageSize + 1,
      });
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
        params: Type.Object({ deliveryId: Type.String() }),
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const row = await getDeliveryRecord(db, request.params.deliveryId);
      if (!row || !isParty(caller, row)) {
        throw new HttpError(
          404,
          'delivery_not_found',
          `no delivery ${request.params.deliveryId} of your connections`,
        );
      }
      return deliveryRecordView(row, await listAttempts(db, row.delivery_id));
    },
  );

  api.post(
    '/api/replay/:deliveryId',
    {
      schema: {
        summary: 'Re-dispatch the archived payload of a delivery as a new delivery',
        tags: ['deliveries'],
        security,
        params: Type.Object({ deliveryId: Type.String() }),
      },
    },
    async (request, reply) => {
      const caller = requireCaller(request);
      const result = await replayDelivery(context, request.params.deliveryId, (delivery) =>
        isParty(caller, delivery),
      );
      if (result.outcome === 'not_found') {
        throw new HttpError(
          404,
          'delivery_not_found',
          `no delivery ${request.params.deliveryId} of your connections`,
        );
      }
      if (result.outcome === 'archive_expired') {
        throw new HttpError(
          410,
          'archive_expired',
          `the archived payload of ${request.params.deliveryId} has expired (archives are kept 90 days); it cannot be replayed`,
        );
      }
      context.wakeDispatcher();
      return reply.code(202).send(deliveryRecordView((await getDeliveryRecord(db, result.replayId))!));
    },
  );
}
