import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { applyConsumerReport, type ConsumerReport } from '../../delivery/consumer-transitions.js';
import type { UsageCounter } from '../../domain/usage.js';
import { getArchive } from '../../store/archives.js';
import { deliveriesOfCorrelation, findConsumerDelivery, getDelivery } from '../../store/deliveries/index.js';
import { getDeliveryRecord } from '../../store/delivery-records.js';
import type { DeliveryRow } from '../../store/schema.js';
import { bearerToken, verifyActionsToken } from '../actions-auth.js';
import { BODY_PROBLEMS, DeliveryRecordSchema, PATH_PROBLEMS, problems } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { HttpError } from '../problem.js';
import { deliveryRecordView } from '../views.js';

/**
 * The consumer side: confirm, complete, and the payload fetch for `payloadRef`. A caller
 * proves who it is with its workflow's OIDC token (its `repository` must be the delivery's consumer
 * repository) or with the delivery's own token from `client_payload.zekt.token`. A valid token of
 * another repository gets 404, exactly like an unknown correlation id: nothing is revealed.
 */
type ConsumerIdentity = { kind: 'delivery-token'; token: string } | { kind: 'oidc'; repositoryId: number };

const DELIVERY_TOKEN = /^zdt_[A-Za-z0-9_-]{43}$/;
const CorrelationId = Type.Union(
  [Type.String({ minLength: 1, maxLength: 40 }), Type.Integer({ minimum: 1 })],
  {
    description: "the provider's run_id (client_payload.zekt.correlationId)",
  },
);
const DeliveryId = Type.String({
  pattern: '^delivery-[0-9a-f-]{36}$',
  description: 'client_payload.zekt.deliveryId',
});
const security: Array<Record<string, string[]>> = [{ actionsOidc: [] }, { deliveryToken: [] }];
const REPORT_RESPONSE = {
  200: DeliveryRecordSchema,
  ...problems(BODY_PROBLEMS, 'invalid_token', 'oidc_unavailable', 'delivery_not_found', 'already_final'),
};

export function registerConsumerRoutes(
  app: App,
  context: Pick<AppContext, 'store' | 'clock' | 'oidc' | 'deliveryTokens' | 'tracer'>,
): void {
  const identities = new WeakMap<FastifyRequest, ConsumerIdentity>();
  // Who calls is settled before the body is read: strangers' bodies are never buffered.
  const identifyFirst = async (request: FastifyRequest) => {
    identities.set(request, await identify(request.headers.authorization));
  };
  /** A delivery token that matches no delivery is a failed authentication, though answered 404. */
  const refused = (request: FastifyRequest, identity: ConsumerIdentity) => {
    if (identity.kind === 'delivery-token') request.authenticationFailed = true;
  };

  async function identify(header: string | undefined): Promise<ConsumerIdentity> {
    const token = bearerToken(header);
    if (token?.startsWith('zdt_')) {
      if (!DELIVERY_TOKEN.test(token))
        throw new HttpError('invalid_token', 'the delivery token is malformed');
      return { kind: 'delivery-token', token };
    }
    if (!token) {
      throw new HttpError(
        'invalid_token',
        "send the consumer workflow's OIDC token or the delivery's token (client_payload.zekt.token): Authorization: Bearer …",
      );
    }
    const claims = await verifyActionsToken(context, token);
    return { kind: 'oidc', repositoryId: claims.repositoryId };
  }

  function notFound(correlationId: string): HttpError {
    return new HttpError(
      'delivery_not_found',
      `no delivery of correlationId ${correlationId} to the repository this token belongs to`,
    );
  }

  async function resolve(
    request: FastifyRequest,
    identity: ConsumerIdentity,
    correlationId: string,
    deliveryId: string | undefined,
  ): Promise<DeliveryRow> {
    const db = context.store.db;
    if (identity.kind === 'oidc') {
      const found = await findConsumerDelivery(db, {
        correlationId,
        consumerRepositoryId: identity.repositoryId,
        deliveryId,
      });
      if (!found) throw notFound(correlationId);
      return found;
    }
    const candidates = deliveryId
      ? [await getDelivery(db, deliveryId)]
      : await deliveriesOfCorrelation(db, correlationId);
    const match = candidates.find(
      (d): d is DeliveryRow =>
        d !== undefined &&
        d.correlation_id === correlationId &&
        context.deliveryTokens.verify(d.delivery_id, identity.token),
    );
    if (!match) {
      refused(request, identity);
      throw notFound(correlationId);
    }
    return match;
  }

  async function report(
    request: FastifyRequest,
    body: { correlationId: string | number; deliveryId?: string | undefined },
    what: ConsumerReport,
    usage: UsageCounter,
  ) {
    const identity = identities.get(request)!;
    const correlationId = String(body.correlationId);
    const delivery = await resolve(request, identity, correlationId, body.deliveryId);
    const result = await applyConsumerReport(context, delivery.delivery_id, what, usage);
    if (result.outcome === 'missing') throw notFound(correlationId);
    const record = deliveryRecordView((await getDeliveryRecord(context.store.db, delivery.delivery_id))!);
    if (result.outcome === 'final') {
      throw new HttpError(
        'already_final',
        `delivery ${delivery.delivery_id} is already ${result.delivery.status}; it does not change any more`,
        { record },
      );
    }
    return record;
  }

  app.post(
    '/api/event-delivery/confirm',
    {
      schema: {
        summary: 'The consumer workflow started (first step): Dispatched → Confirmed',
        tags: ['consumer'],
        security,
        body: Type.Object({ correlationId: CorrelationId, deliveryId: Type.Optional(DeliveryId) }),
        response: REPORT_RESPONSE,
      },
      onRequest: identifyFirst,
    },
    async (request) => report(request, request.body, { kind: 'confirm' }, 'confirmCalls'),
  );

  app.post(
    '/api/event-delivery/complete',
    {
      schema: {
        summary: 'The consumer workflow finished (last step): → Completed or Failed',
        tags: ['consumer'],
        security,
        body: Type.Object({
          correlationId: CorrelationId,
          success: Type.Boolean({ description: 'true: Completed, false: Failed' }),
          deliveryId: Type.Optional(DeliveryId),
        }),
        response: REPORT_RESPONSE,
      },
      onRequest: identifyFirst,
    },
    async (request) =>
      report(request, request.body, { kind: 'complete', success: request.body.success }, 'completeCalls'),
  );

  app.get(
    '/api/deliveries/:deliveryId/payload',
    {
      schema: {
        summary: 'The archived message of a delivery sent by reference (client_payload.zekt.payloadRef)',
        tags: ['consumer'],
        security,
        params: Type.Object({ deliveryId: Type.String() }),
        response: {
          200: Type.Unknown({ description: "the provider's message, unchanged" }),
          ...problems(
            PATH_PROBLEMS,
            'invalid_token',
            'oidc_unavailable',
            'delivery_not_found',
            'archive_expired',
            'payload_not_found',
          ),
        },
      },
      onRequest: identifyFirst,
    },
    async (request, reply) => {
      const identity = identities.get(request)!;
      const delivery = await getDelivery(context.store.db, request.params.deliveryId);
      const allowed =
        delivery !== undefined &&
        (identity.kind === 'oidc'
          ? delivery.consumer_repository_id === identity.repositoryId
          : context.deliveryTokens.verify(delivery.delivery_id, identity.token));
      if (!delivery || !allowed) {
        refused(request, identity);
        throw new HttpError(
          'delivery_not_found',
          `no delivery ${request.params.deliveryId} to the repository this token belongs to`,
        );
      }
      const archive = await getArchive(context.store.db, delivery.event_id);
      if (!archive || archive.expires_at < context.clock.now()) {
        throw new HttpError(
          'archive_expired',
          'the archived payload of this delivery has expired (archives are kept 90 days)',
        );
      }
      if (!archive.has_message || archive.payload === null) {
        throw new HttpError(
          'payload_not_found',
          'this delivery carried no message, only the completion event',
        );
      }
      return reply.type('application/json').send(archive.payload);
    },
  );
}
