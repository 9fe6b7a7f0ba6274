import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { ingestGitHubWebhook } from '../../ingest/github-webhook.js';
import { createHookSecrets } from '../../ingest/hook-secrets.js';
import type { WebhookOutcome } from '../../ingest/webhook-types.js';
import type { WebhookMetricOutcome } from '../../metrics/metrics.js';
import { BODY_PROBLEMS, problems, WebhookAnswerSchema } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { HttpError, sendProblem } from '../problem.js';
import type { RateLimiter } from '../rate-limits.js';

/** GitHub caps webhook payloads at 25 MB. https://docs.github.com/webhooks/webhook-events-and-payloads#payload-cap */
const GITHUB_PAYLOAD_CAP_BYTES = 25 * 1024 * 1024;
const SETUP_REQUIRED_DETAIL =
  'Zekt has no GitHub App yet (setup mode): register one at /setup with the setup code `zekt serve` printed (`zekt setup` prints it again)';
const UNSIGNED_DETAIL =
  'X-Hub-Signature-256 is missing: configure a webhook secret (every Zekt webhook must be signed)';

export function registerWebhookRoute(
  app: App,
  context: Pick<
    AppContext,
    | 'store'
    | 'clock'
    | 'secretBox'
    | 'appCredentials'
    | 'messageGraceMs'
    | 'routeInline'
    | 'handoff'
    | 'http'
    | 'logger'
    | 'wakeRouter'
    | 'wakeDispatcher'
    | 'metrics'
    | 'tracer'
  > & { rateLimiter: Pick<RateLimiter, 'countWebhookFailure'> },
): void {
  // What each answered request was, for the counter; requests refused before the handler ran
  // (too large, too slow, store down) are not in it and count as rejected or error.
  const outcomes = new WeakMap<object, WebhookMetricOutcome>();
  const hookSecrets = createHookSecrets({ store: context.store, secretBox: context.secretBox });
  app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    // The signature covers the exact bytes GitHub sent, so the body is kept raw here.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: GITHUB_PAYLOAD_CAP_BYTES },
      (_request, body, done) => done(null, body),
    );
    scope.post(
      '/webhooks/github',
      {
        bodyLimit: GITHUB_PAYLOAD_CAP_BYTES,
        // Refused from the headers, before the body (up to 25 MB) is read: in setup mode there is no
        // App to verify it with (the store is read again: another process may have registered
        // one), and an unsigned webhook is never accepted.
        onRequest: async (request) => {
          if ((await context.appCredentials.get({ fresh: true })) === null) {
            outcomes.set(request, 'rejected');
            throw new HttpError('setup_required', SETUP_REQUIRED_DETAIL);
          }
          if (request.headers['x-hub-signature-256'] === undefined) {
            outcomes.set(request, 'bad_signature');
            throw new HttpError('invalid_signature', UNSIGNED_DETAIL);
          }
        },
        onResponse: async (request, reply) => {
          context.metrics.webhookReceived(
            outcomes.get(request) ?? (reply.statusCode >= 500 ? 'error' : 'rejected'),
          );
          context.metrics.ingestAnswered('webhook', reply.elapsedTime);
        },
        schema: {
          summary: 'GitHub webhook receiver (App webhook and the repository hooks Zekt places)',
          tags: ['ingestion'],
          response: {
            200: WebhookAnswerSchema,
            202: WebhookAnswerSchema,
            ...problems(
              BODY_PROBLEMS,
              'invalid_signature',
              'unsupported_media_type',
              'malformed_webhook',
              'hook_repository_mismatch',
              'payload_too_large',
              'setup_required',
            ),
          },
        },
      },
      async (request, reply) => {
        const header = (name: string) => {
          const value = request.headers[name];
          return Array.isArray(value) ? value[0] : value;
        };
        const app = await context.appCredentials.get();
        if (app === null) throw new HttpError('setup_required', SETUP_REQUIRED_DETAIL);
        const outcome = await ingestGitHubWebhook(
          {
            store: context.store,
            clock: context.clock,
            secretBox: context.secretBox,
            hookSecrets,
            appWebhookSecret: app.webhookSecret,
            messageGraceMs: context.messageGraceMs,
            routeInline: context.routeInline,
            handoff: context.handoff,
            maxJsonDepth: context.http.maxJsonDepth,
            logger: context.logger,
            onEventStored: context.wakeRouter,
            onDeliveriesCreated: context.wakeDispatcher,
            tracer: context.tracer,
          },
          {
            event: header('x-github-event'),
            deliveryGuid: header('x-github-delivery'),
            hookId: header('x-github-hook-id'),
            targetType: header('x-github-hook-installation-target-type'),
            targetId: header('x-github-hook-installation-target-id'),
            signature256: header('x-hub-signature-256'),
            contentType: header('content-type'),
            rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          },
        );
        outcomes.set(request, METRIC_OUTCOME[outcome.outcome]);
        // Counted only once the signature failed: a validly signed webhook is never refused for
        // what others sent under its hook id or from its address (http/rate-limits.ts).
        if (outcome.outcome === 'unauthorized') await context.rateLimiter.countWebhookFailure(outcome.hookId);
        return answer(reply, outcome);
      },
    );
  });
}

const METRIC_OUTCOME: Record<WebhookOutcome['outcome'], WebhookMetricOutcome> = {
  unauthorized: 'bad_signature',
  unsupported: 'unsupported',
  malformed: 'malformed',
  too_deep: 'malformed',
  forbidden: 'forbidden',
  duplicate: 'duplicate',
  pong: 'pong',
  applied: 'applied',
  ignored: 'ignored',
  accepted: 'accepted',
};

function answer(reply: FastifyReply, outcome: WebhookOutcome): FastifyReply {
  switch (outcome.outcome) {
    case 'unauthorized':
      return sendProblem(reply, new HttpError('invalid_signature', outcome.detail));
    case 'unsupported':
      return sendProblem(reply, new HttpError('unsupported_media_type', outcome.detail));
    case 'malformed':
      return sendProblem(reply, new HttpError('malformed_webhook', outcome.detail));
    case 'too_deep':
      return sendProblem(reply, new HttpError('json_too_deep', outcome.detail));
    case 'forbidden':
      return sendProblem(reply, new HttpError('hook_repository_mismatch', outcome.detail));
    case 'duplicate':
      return reply.code(200).send({ outcome: 'duplicate', detail: outcome.detail });
    case 'pong':
      return reply.code(200).send({ outcome: 'pong' });
    case 'applied':
      return reply.code(200).send({ outcome: 'applied', detail: outcome.detail });
    case 'ignored':
      return reply.code(202).send({ outcome: 'ignored', detail: outcome.detail });
    case 'accepted':
      return reply.code(202).send({ outcome: 'accepted', eventId: outcome.eventId });
  }
}
