import Type from 'typebox';
import {
  DIAGNOSTICS_WINDOW_MS,
  emptyCategories,
  RECENT_FAILURES,
  recommend,
} from '../../domain/diagnostics.js';
import { DAY_MS, HOUR_MS } from '../../domain/duration.js';
import { ERROR_CATEGORIES, type ErrorCategory } from '../../domain/error-category.js';
import {
  connectionHealth,
  HEALTH_WINDOW_MS,
  HEALTHY_PERCENT,
  RECENT_ACTIVITY_MS,
  successRate,
  WARNING_PERCENT,
} from '../../domain/health.js';
import { describeWait, NOT_STARTED_CATEGORY } from '../../domain/not-started.js';
import { usageDay } from '../../domain/usage.js';
import {
  connectionHistory,
  connectionStats,
  consumerFailures,
  emptyStats,
  failedAttempts,
} from '../../store/connection-stats.js';
import { notStartedOfConnection } from '../../store/not-started.js';
import type { SubscriptionRow } from '../../store/schema.js';
import { listSubscriptions, routeOfSubscription } from '../../store/subscriptions.js';
import {
  AUTH_PROBLEMS,
  ConnectionHistorySchema,
  ConnectionPageSchema,
  DiagnosticsSchema,
  PATH_PROBLEMS,
  problems,
} from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { type Caller, MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { partyConnection } from '../connection-party.js';
import { CURSOR_FIELDS, PageQuery, pageOf, readPage } from '../pagination.js';
import { HttpError } from '../problem.js';
import { iso, isoAt } from '../views.js';
import { accountLogins, repositoryNames, servicesById } from './lookups.js';
import { RoleQuery } from './subscriptions.js';

const security = MANAGEMENT_SECURITY;

/** GitHub's status for the accepted dispatch (204), from the platform response kept with the delivery. */
function acceptedStatus(platformResponse: string | null): number | null {
  if (platformResponse === null) return null;
  const status = (JSON.parse(platformResponse) as { status?: unknown }).status;
  return typeof status === 'number' ? status : null;
}
const MAX_HISTORY_DAYS = 90;

/** My Connections and connection diagnostics. A connection is a subscription. */
export function registerConnectionRoutes(
  api: App,
  context: Pick<AppContext, 'store' | 'clock' | 'notStartedAfterMs'>,
): void {
  const db = context.store.db;

  async function visibleConnection(
    caller: Caller,
    id: string,
  ): Promise<SubscriptionRow & { provider_account_id: number }> {
    const party = await partyConnection(db, caller, id);
    if (!party?.service) {
      throw new HttpError('connection_not_found', `no connection ${id} that you are a party to`);
    }
    return { ...party.subscription, provider_account_id: party.service.account_id };
  }

  api.get(
    '/api/v1/connections',
    {
      schema: {
        summary: 'My Connections: health, success rate, last event and quick statistics',
        tags: ['connections'],
        security,
        querystring: Type.Object({ role: RoleQuery, ...PageQuery }),
        response: { 200: ConnectionPageSchema, ...problems(AUTH_PROBLEMS, 'invalid_cursor') },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const now = context.clock.now();
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.id('sub')]);
      const page = pageOf(
        await listSubscriptions(
          db,
          caller.accounts.map((a) => a.account_id),
          { role: request.query.role, page: store },
        ),
        limit,
        (row) => [row.subscription_id],
      );
      const subscriptions = page.items;
      const stats = await connectionStats(
        db,
        subscriptions.map((s) => s.subscription_id),
        now,
      );
      const services = await servicesById(
        db,
        subscriptions.map((s) => s.service_id),
      );
      const [logins, repositories] = await Promise.all([
        accountLogins(
          db,
          subscriptions.flatMap((s) => [s.provider_account_id, s.consumer_account_id]),
        ),
        repositoryNames(db, [
          ...subscriptions.map((s) => s.consumer_repository_id),
          ...[...services.values()].map((s) => s.repository_id),
        ]),
      ]);
      return {
        connections: subscriptions.map((subscription) => {
          const service = services.get(subscription.service_id)!;
          const s = stats.get(subscription.subscription_id) ?? emptyStats();
          const health = connectionHealth({
            total: s.total24h,
            succeeded: s.succeeded24h,
            lastEventAt: s.lastEventAt,
            now,
          });
          return {
            id: subscription.subscription_id,
            status: subscription.status,
            durable: Boolean(subscription.durable),
            service: { id: service.service_id, slug: service.slug },
            provider: {
              account: logins.get(service.account_id) ?? null,
              repository: repositories.get(service.repository_id) ?? null,
            },
            consumer: {
              account: logins.get(subscription.consumer_account_id) ?? null,
              repository: repositories.get(subscription.consumer_repository_id) ?? null,
            },
            health: health.health,
            hasEvents: s.lastEventAt !== null,
            recentActivity: health.recentActivity,
            successRate: health.successRate,
            lastEventAt: iso(s.lastEventAt),
            stats: {
              last24h: {
                total: s.total24h,
                succeeded: s.succeeded24h,
                failed: s.failed24h,
                notStarted: s.notStarted24h,
              },
              last7d: { total: s.total7d },
              pending: s.pending,
            },
          };
        }),
        thresholds: {
          healthyPercent: HEALTHY_PERCENT,
          warningPercent: WARNING_PERCENT,
          windowHours: HEALTH_WINDOW_MS / HOUR_MS,
          recentActivityDays: RECENT_ACTIVITY_MS / DAY_MS,
        },
        nextCursor: page.nextCursor,
      };
    },
  );

  api.get(
    '/api/v1/connections/:id/history',
    {
      schema: {
        summary: 'Success rate of a connection per day (UTC), oldest first: the chart of My Connections',
        tags: ['connections'],
        security,
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({
          days: Type.Optional(
            Type.String({ description: `1–${MAX_HISTORY_DAYS} days up to today (default 14)` }),
          ),
        }),
        response: {
          200: ConnectionHistorySchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'connection_not_found'),
        },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      // A query parameter arrives as text: parse it here, where its range is checked.
      const days: number = request.query.days === undefined ? 14 : Number(request.query.days);
      if (!Number.isInteger(days) || days < 1 || days > MAX_HISTORY_DAYS) {
        throw new HttpError('invalid_request', `days must be a whole number from 1 to ${MAX_HISTORY_DAYS}`);
      }
      const connection = await visibleConnection(caller, request.params.id);
      const today = Math.floor(context.clock.now() / DAY_MS);
      const first = today - days + 1;
      const rows = new Map(
        (await connectionHistory(db, connection.subscription_id, first * DAY_MS)).map((r) => [r.epochDay, r]),
      );
      return {
        connectionId: connection.subscription_id,
        days: Array.from({ length: days }, (_, i) => {
          const row = rows.get(first + i);
          const total = row?.total ?? 0;
          const succeeded = row?.succeeded ?? 0;
          return {
            day: usageDay((first + i) * DAY_MS),
            total,
            succeeded,
            failed: row?.failed ?? 0,
            successRate: successRate(total, succeeded),
          };
        }),
      };
    },
  );

  api.get(
    '/api/connections/:id/diagnostics',
    {
      schema: {
        summary: 'Why deliveries of a connection failed (30 days) and what to do about it',
        tags: ['connections'],
        security,
        params: Type.Object({ id: Type.String() }),
        response: {
          200: DiagnosticsSchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'connection_not_found'),
        },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const connection = await visibleConnection(caller, request.params.id);
      const now = context.clock.now();
      const since = now - DIAGNOSTICS_WINDOW_MS;
      const s =
        (await connectionStats(db, [connection.subscription_id], now)).get(connection.subscription_id) ??
        emptyStats();
      const health = connectionHealth({
        total: s.total24h,
        succeeded: s.succeeded24h,
        lastEventAt: s.lastEventAt,
        now,
      });
      const failures = await failedAttempts(db, connection.subscription_id, since, RECENT_FAILURES);
      const categories = emptyCategories();
      for (const [category, n] of failures.counts) {
        const known = (ERROR_CATEGORIES as readonly string[]).includes(category)
          ? (category as ErrorCategory)
          : 'other';
        categories[known] += n;
      }
      const notStarted = await notStartedOfConnection(db, connection.subscription_id, since, RECENT_FAILURES);
      categories.not_started = notStarted.count;
      // A never-started delivery is a failure too: its accepted attempt, with why it is listed.
      const recentFailures = [
        ...failures.recent.map((f) => ({
          deliveryId: f.delivery_id,
          attempt: f.number,
          at: isoAt(f.started_at),
          category: f.error_category,
          status: f.status_code,
          message: f.error_message,
        })),
        ...notStarted.recent.map((d) => ({
          deliveryId: d.delivery_id,
          attempt: d.attempt_count,
          at: isoAt(d.not_started_at),
          category: NOT_STARTED_CATEGORY,
          status: acceptedStatus(d.platform_response),
          message: `GitHub accepted the dispatch, but no workflow run confirmed it or was seen by completion tracking within ${describeWait(context.notStartedAfterMs)}`,
        })),
      ]
        .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
        .slice(0, RECENT_FAILURES);
      const logins = await accountLogins(db, [connection.consumer_account_id]);
      const names = await repositoryNames(db, [connection.consumer_repository_id]);
      return {
        connectionId: connection.subscription_id,
        health: health.health,
        successRate: health.successRate,
        window: { from: isoAt(since), to: isoAt(now), days: DIAGNOSTICS_WINDOW_MS / DAY_MS },
        categories,
        consumerFailures: await consumerFailures(db, connection.subscription_id, since),
        recentFailures,
        recommendations: recommend({
          consumerAccount: logins.get(connection.consumer_account_id) ?? 'the consumer account',
          consumerRepository: names.get(connection.consumer_repository_id) ?? 'the consumer repository',
          counts: categories,
          durable: Boolean(connection.durable),
          notStarted: { eventTypes: notStarted.eventTypes, afterMs: context.notStartedAfterMs },
          route: routeOfSubscription(connection),
        }),
      };
    },
  );
}
