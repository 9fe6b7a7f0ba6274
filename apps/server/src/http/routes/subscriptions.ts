import Type from 'typebox';
import { type DeliveryRoute, decideDeliveryRoute, tracksRuns } from '../../domain/delivery-mode.js';
import {
  decideSubscription,
  type SubscriptionDecision,
  type SubscriptionStatus,
} from '../../domain/subscription-state.js';
import { getRepository } from '../../store/accounts.js';
import { recordAudit } from '../../store/audit.js';
import type { SubscriptionRow } from '../../store/schema.js';
import { getService, listDirectory } from '../../store/services.js';
import {
  createSubscription,
  getSubscription,
  listSubscriptions,
  routeOfSubscription,
  setDeliveryRoute,
  setDurable,
  setSubscriptionStatus,
} from '../../store/subscriptions.js';
import { withinAccountCap } from '../account-caps.js';
import {
  AUTH_PROBLEMS,
  CHANGE_PROBLEMS,
  DeliveryModeSchema,
  PATH_PROBLEMS,
  problems,
  SubscriptionPageSchema,
  SubscriptionSchema,
} from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { auditActor } from '../audit-actor.js';
import { type Caller, MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { partyConnection } from '../connection-party.js';
import { CURSOR_FIELDS, PageQuery, pageOf, readPage } from '../pagination.js';
import { HttpError } from '../problem.js';
import { memberRepository, subscriptionViews } from './lookups.js';

const security = MANAGEMENT_SECURITY;
const IdParams = Type.Object({ id: Type.String() });
/** Which side of its subscriptions the caller wants to see: the services it provides, or consumes. */
export const RoleQuery = Type.Optional(
  Type.Union([Type.Literal('provider'), Type.Literal('consumer')], {
    description: 'provider: subscriptions to your services; consumer: your subscriptions; default both',
  }),
);
const DECISION_RESPONSE = {
  200: SubscriptionSchema,
  ...problems(CHANGE_PROBLEMS, PATH_PROBLEMS, 'subscription_not_found', 'invalid_transition'),
};

function invalidTransition(from: SubscriptionStatus, to: SubscriptionStatus): HttpError {
  return new HttpError('invalid_transition', `the subscription is ${from}; it cannot become ${to}`, {
    statusCurrent: from,
  });
}

/**
 * Subscriptions (connections): a consumer requests access to a service for one of its
 * repositories; the provider approves, denies or revokes; the consumer may withdraw (Remove). Who
 * may do what, from which state, is domain/subscription-state.ts's.
 */
export function registerSubscriptionRoutes(
  api: App,
  context: Pick<AppContext, 'store' | 'clock' | 'limits'>,
): void {
  const db = context.store.db;

  async function view(subscription: SubscriptionRow) {
    return (await subscriptionViews(db, [subscription]))[0]!;
  }

  /** The subscription and which sides of it the caller is on; 404 when on neither. */
  async function visible(caller: Caller, id: string) {
    const party = await partyConnection(db, caller, id);
    if (!party)
      throw new HttpError('subscription_not_found', `no subscription ${id} that you are a party to`);
    const { subscription, asProvider, asConsumer } = party;
    return { subscription, asProvider, asConsumer };
  }

  /** Applies `decision` as domain/subscription-state.ts rules it, and records it in the audit trail. */
  async function decide(caller: Caller, id: string, decision: SubscriptionDecision) {
    const { subscription, asProvider, asConsumer } = await visible(caller, id);
    const transition = decideSubscription(subscription.status, decision, { asProvider, asConsumer });
    if (transition.outcome === 'not_allowed') {
      throw new HttpError('subscription_not_found', `no subscription ${id} of a service you provide`);
    }
    if (transition.outcome === 'invalid_transition') throw invalidTransition(transition.from, transition.to);
    const service = await getService(db, subscription.service_id);
    await context.store.transaction(async (trx) => {
      const now = context.clock.now();
      const from = subscription.status;
      const moved = await setSubscriptionStatus(
        trx,
        subscription.subscription_id,
        from,
        transition.to,
        caller.user.user_id,
        now,
      );
      if (!moved) {
        const current = (await getSubscription(trx, subscription.subscription_id))?.status ?? from;
        throw invalidTransition(current, transition.to);
      }
      await recordAudit(
        trx,
        {
          actor: auditActor(caller),
          accountIds: [...(service ? [service.account_id] : []), subscription.consumer_account_id],
          action: transition.action,
          target: { type: 'subscription', id: subscription.subscription_id },
          before: { status: from },
          after: { status: transition.to },
        },
        now,
      );
    });
    return view((await getSubscription(db, subscription.subscription_id))!);
  }

  api.post(
    '/api/v1/subscriptions',
    {
      schema: {
        summary: 'Request access to a published service for one of your repositories',
        tags: ['subscriptions'],
        security,
        body: Type.Object(
          {
            serviceId: Type.String(),
            deliversTo: Type.String({
              description: 'owner/repo that receives the repository_dispatch events',
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          201: SubscriptionSchema,
          ...problems(
            CHANGE_PROBLEMS,
            'service_not_found',
            'repository_not_found',
            'subscription_exists',
            'limit_reached',
          ),
        },
      },
    },
    async (request, reply) => {
      const caller = requireCaller(request);
      const [service] = await listDirectory(db, {
        memberAccountIds: caller.accounts.map((a) => a.account_id),
        serviceId: request.body.serviceId,
      });
      if (!service) {
        throw new HttpError(
          'service_not_found',
          `no published service ${request.body.serviceId} visible to you (see GET /api/v1/directory)`,
        );
      }
      const [owner, repo, ...rest] = request.body.deliversTo.split('/');
      if (!owner || !repo || rest.length > 0)
        throw new HttpError('invalid_request', 'deliversTo must be owner/repo, e.g. globex/app');
      const { repository } = await memberRepository(db, caller, owner, repo);
      const consumerAccountId = repository.account_id;
      const created = await withinAccountCap(context, 'pendingRequests', consumerAccountId, async (trx) => {
        const now = context.clock.now();
        const made = await createSubscription(
          trx,
          {
            serviceId: service.service_id,
            consumerAccountId,
            consumerRepositoryId: repository.repository_id,
            requestedBy: caller.user.user_id,
          },
          now,
        );
        if (made === 'duplicate') return made;
        await recordAudit(
          trx,
          {
            actor: auditActor(caller),
            accountIds: [service.account_id, consumerAccountId],
            action: 'subscription.request',
            target: { type: 'subscription', id: made.subscription_id },
            after: { service: service.service_id, deliversTo: repository.full_name, status: made.status },
          },
          now,
        );
        return made;
      });
      if (created === 'duplicate') {
        throw new HttpError(
          'subscription_exists',
          `${repository.full_name} already has a requested or approved subscription to this service`,
        );
      }
      return reply.code(201).send(await view(created));
    },
  );

  api.get(
    '/api/v1/subscriptions',
    {
      schema: {
        summary: 'Subscriptions you are a party to (as consumer or provider)',
        tags: ['subscriptions'],
        security,
        querystring: Type.Object({ role: RoleQuery, ...PageQuery }),
        response: { 200: SubscriptionPageSchema, ...problems(AUTH_PROBLEMS, 'invalid_cursor') },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.id('sub')]);
      const rows = await listSubscriptions(
        db,
        caller.accounts.map((a) => a.account_id),
        { role: request.query.role, page: store },
      );
      const page = pageOf(rows, limit, (row) => [row.subscription_id]);
      return { subscriptions: await subscriptionViews(db, page.items), nextCursor: page.nextCursor };
    },
  );

  api.get(
    '/api/v1/subscriptions/:id',
    {
      schema: {
        summary: 'One subscription',
        tags: ['subscriptions'],
        security,
        params: IdParams,
        response: {
          200: SubscriptionSchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'subscription_not_found'),
        },
      },
    },
    async (request) => view((await visible(requireCaller(request), request.params.id)).subscription),
  );

  api.post(
    '/api/v1/subscriptions/:id/approve',
    {
      schema: {
        summary: 'Approve a requested subscription (provider)',
        tags: ['subscriptions'],
        security,
        params: IdParams,
        response: DECISION_RESPONSE,
      },
    },
    async (request) => decide(requireCaller(request), request.params.id, 'approve'),
  );
  api.post(
    '/api/v1/subscriptions/:id/deny',
    {
      schema: {
        summary: 'Deny a requested subscription (provider)',
        tags: ['subscriptions'],
        security,
        params: IdParams,
        response: DECISION_RESPONSE,
      },
    },
    async (request) => decide(requireCaller(request), request.params.id, 'deny'),
  );
  api.post(
    '/api/v1/subscriptions/:id/revoke',
    {
      schema: {
        summary: 'Revoke a subscription (provider: revoked), or withdraw it (consumer, Remove: withdrawn)',
        tags: ['subscriptions'],
        security,
        params: IdParams,
        response: DECISION_RESPONSE,
      },
    },
    async (request) => decide(requireCaller(request), request.params.id, 'revoke'),
  );

  api.patch(
    '/api/v1/subscriptions/:id',
    {
      schema: {
        summary: 'The Durable Delivery switch and how deliveries are sent (consumer)',
        description:
          'durable: the Durable Delivery switch (needs COMPLETION on the consumer repository, or deliveryMode workflow_dispatch). deliveryMode: repository_dispatch (default), or workflow_dispatch to `workflow` (a file name in .github/workflows of the consumer repository) on `ref` (a branch or tag; null: the default branch). workflow_dispatch needs the App’s Actions: write permission on the consumer’s installation.',
        tags: ['subscriptions'],
        security,
        params: IdParams,
        body: Type.Object(
          {
            durable: Type.Optional(Type.Boolean()),
            deliveryMode: Type.Optional(DeliveryModeSchema),
            workflow: Type.Optional(
              Type.String({
                maxLength: 255,
                description: 'workflow_dispatch: the workflow file, e.g. on-deploy.yml',
              }),
            ),
            ref: Type.Optional(
              Type.Union([Type.String({ maxLength: 255 }), Type.Null()], {
                description: 'workflow_dispatch: the branch or tag; null or "": the default branch',
              }),
            ),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: {
          200: SubscriptionSchema,
          ...problems(
            CHANGE_PROBLEMS,
            PATH_PROBLEMS,
            'subscription_not_found',
            'invalid_workflow_file',
            'invalid_ref',
            'completion_tracking_disabled',
          ),
        },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { subscription, asConsumer } = await visible(caller, request.params.id);
      if (!asConsumer)
        throw new HttpError(
          'subscription_not_found',
          `no subscription ${request.params.id} delivering to your repositories`,
        );
      const { body } = request;
      const before = routeOfSubscription(subscription);
      const routeAsked =
        body.deliveryMode !== undefined || body.workflow !== undefined || body.ref !== undefined;
      let route = before;
      if (routeAsked) {
        const decision = decideDeliveryRoute(before, {
          deliveryMode: body.deliveryMode,
          workflow: body.workflow,
          ref: body.ref,
        });
        if (!decision.ok) throw new HttpError(decision.code, decision.detail);
        route = decision.route;
      }
      const durable = body.durable ?? Boolean(subscription.durable);
      const repository = await getRepository(db, subscription.consumer_repository_id);
      const completionTracking = Boolean(repository?.completion_enabled);
      if (
        durable &&
        (body.durable !== undefined || body.deliveryMode !== undefined) &&
        !tracksRuns({ mode: route.mode, completionTracking })
      ) {
        throw new HttpError(
          'completion_tracking_disabled',
          `turn on completion tracking (COMPLETION) for ${repository?.full_name} first: Consumer › Zekt Repos in the console, or PUT /api/v1/repositories/${repository?.full_name}/completion-tracking {"enabled":true}; or deliver by workflow_dispatch, whose runs Zekt follows itself ({"deliveryMode":"workflow_dispatch","workflow":"<file>.yml"})`,
        );
      }
      await context.store.transaction(async (trx) => {
        const now = context.clock.now();
        const durableChanged = Boolean(subscription.durable) !== durable;
        const routeChanged = !sameRoute(before, route);
        if (body.durable !== undefined) await setDurable(trx, subscription.subscription_id, durable, now);
        if (routeChanged) await setDeliveryRoute(trx, subscription.subscription_id, route, now);
        if (!durableChanged && !routeChanged) return;
        const service = await getService(trx, subscription.service_id);
        const accountIds = [subscription.consumer_account_id, ...(service ? [service.account_id] : [])];
        const target = { type: 'subscription' as const, id: subscription.subscription_id };
        if (durableChanged) {
          await recordAudit(
            trx,
            {
              actor: auditActor(caller),
              accountIds,
              action: 'subscription.durable',
              target,
              before: { durable: Boolean(subscription.durable) },
              after: { durable },
            },
            now,
          );
        }
        if (routeChanged) {
          await recordAudit(
            trx,
            {
              actor: auditActor(caller),
              accountIds,
              action: 'subscription.delivery_mode',
              target,
              before: auditedRoute(before),
              after: auditedRoute(route),
            },
            now,
          );
        }
      });
      return view((await getSubscription(db, subscription.subscription_id))!);
    },
  );
}

function sameRoute(a: DeliveryRoute, b: DeliveryRoute): boolean {
  return JSON.stringify(auditedRoute(a)) === JSON.stringify(auditedRoute(b));
}

/** A route as the audit trail and the API name its fields. */
function auditedRoute(route: DeliveryRoute) {
  return route.mode === 'workflow_dispatch'
    ? { deliveryMode: route.mode, workflow: route.workflow, ref: route.ref }
    : { deliveryMode: route.mode };
}
