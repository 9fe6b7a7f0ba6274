import Type from 'typebox';
import type { SchemaCheck } from '../../domain/message-schema.js';
import type { ActionsClaims } from '../../github/oidc-verifier.js';
import { receiveMessage } from '../../ingest/message-intake.js';
import { bearerToken, verifyActionsToken } from '../actions-auth.js';
import { BODY_PROBLEMS, MessageAcceptedSchema, problems } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { HttpError } from '../problem.js';

/**
 * The serialized message may be 512 KB; a payload sent as a string holding JSON doubles in size
 * when escaped, so the request body may be larger than the payload it carries.
 */
const BODY_LIMIT_BYTES = 2 * 1024 * 1024;

const MessageBodySchema = Type.Object(
  {
    eventType: Type.Optional(
      Type.Unknown({ description: 'event type: 1–100 characters of [A-Za-z0-9._:-]' }),
    ),
    payload: Type.Optional(
      Type.Unknown({ description: 'any JSON value, or a string holding JSON; at most 512 KB' }),
    ),
    repository: Type.Optional(Type.Unknown({ description: 'owner/repo; must equal the token’s repository' })),
    workflowRunId: Type.Optional(Type.Unknown({ description: 'must equal the token’s run_id' })),
    workflow: Type.Optional(Type.Unknown()),
    triggeredBy: Type.Optional(Type.Unknown()),
    commitSha: Type.Optional(Type.Unknown()),
    ref: Type.Optional(Type.Unknown()),
    timestamp: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

export function registerEventsReceiveRoute(
  app: App,
  context: Pick<
    AppContext,
    'store' | 'clock' | 'oidc' | 'http' | 'wakeRouter' | 'metrics' | 'tracer' | 'schemaChecks'
  >,
): void {
  const claimsOf = new WeakMap<object, ActionsClaims>();
  app.post(
    '/api/events/receive',
    {
      bodyLimit: BODY_LIMIT_BYTES,
      onResponse: async (_request, reply) => {
        context.metrics.ingestAnswered('message', reply.elapsedTime);
      },
      // The token is checked before the body (up to 2 MB) is read: strangers' bodies are never buffered.
      onRequest: async (request) => {
        claimsOf.set(request, await verifyActionsToken(context, bearerToken(request.headers.authorization)));
      },
      schema: {
        summary: 'Receive a message from the Zekt action (wire-compatible with zekt-action)',
        tags: ['ingestion'],
        security: [{ actionsOidc: [] }],
        body: MessageBodySchema,
        response: {
          201: MessageAcceptedSchema,
          ...problems(
            BODY_PROBLEMS,
            'malformed_json',
            'unsupported_media_type',
            'invalid_event_type',
            'invalid_payload',
            'invalid_token',
            'oidc_unavailable',
            'repository_mismatch',
            'repository_not_enabled',
            'run_already_routed',
            'payload_too_large',
            'payload_schema_violation',
            'schema_validation_timeout',
          ),
        },
      },
    },
    async (request, reply) => {
      const claims = claimsOf.get(request)!;
      const headerRepository = request.headers['x-github-repository'];
      const outcome = await receiveMessage(
        {
          store: context.store,
          clock: context.clock,
          onEventDue: context.wakeRouter,
          maxJsonDepth: context.http.maxJsonDepth,
          tracer: context.tracer,
          schemaChecks: context.schemaChecks,
          metrics: context.metrics,
        },
        claims,
        request.body,
        Array.isArray(headerRepository) ? headerRepository[0] : headerRepository,
      );
      switch (outcome.outcome) {
        case 'invalid':
          throw new HttpError(outcome.code, outcome.detail);
        case 'too_large':
          throw new HttpError('payload_too_large', outcome.detail);
        case 'forbidden':
          throw new HttpError('repository_mismatch', outcome.detail);
        case 'not_enabled':
          throw new HttpError('repository_not_enabled', outcome.detail);
        case 'already_routed':
          throw new HttpError('run_already_routed', outcome.detail);
        case 'schema_violation':
          throw new HttpError(outcome.code, outcome.detail, {
            service: outcome.service,
            schemaVersion: outcome.schemaVersion,
            errors: outcome.errors,
            errorCount: outcome.errorCount,
          });
        case 'stored':
          return reply.code(201).send({
            success: true,
            eventId: outcome.messageId,
            consumersNotified: outcome.consumersNotified,
            message: `${outcome.replaced ? 'message replaced' : 'message stored'}; ${outcome.consumersNotified} consumer(s) will receive it when the run completes${warnings(outcome.violations)}`,
            ...(outcome.violations.length > 0
              ? {
                  schemaViolations: outcome.violations.map((v) => ({
                    service: v.slug,
                    schemaVersion: v.version,
                    errors: v.errors,
                    errorCount: v.errorCount,
                  })),
                }
              : {}),
          });
      }
    },
  );
}

/** What the provider's step is told of warn-mode violations (its message was accepted). */
function warnings(violations: SchemaCheck[]): string {
  if (violations.length === 0) return '';
  return `; it does not match the schema of ${violations.map((v) => `${v.slug} (version ${v.version}, ${v.errorCount} violation(s))`).join(', ')}, which only warns: fix it before the schema is enforced`;
}
