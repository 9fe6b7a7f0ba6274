import type { SchemaCheckPool } from '../contracts/schema-check-pool.js';
import { JsonTooDeepError, parseBoundedJson } from '../domain/bounded-json.js';
import type { Clock } from '../domain/clock.js';
import { describeInvalidEventType, isValidEventType } from '../domain/event-type.js';
import {
  decideMessage,
  type MessageVerdict,
  type SchemaCheck,
  type SchemaProblem,
} from '../domain/message-schema.js';
import { workflowPathFromRef } from '../domain/workflow-path.js';
import type { ActionsClaims } from '../github/oidc-verifier.js';
import type { Metrics } from '../metrics/metrics.js';
import { getRepositoryLockingRun } from '../store/accounts.js';
import { lockEventByRunKey } from '../store/events.js';
import { upsertMessage } from '../store/messages.js';
import { recordMessageViolations } from '../store/schema-violations.js';
import { loadSchemaText, schemasInForce } from '../store/service-schemas.js';
import type { Store } from '../store/store.js';
import { routableSubscriptions } from '../store/subscriptions.js';
import { countUsage } from '../store/usage.js';
import { getWorkflow } from '../store/workflows.js';
import { recordMessageSpan } from '../tracing/spans.js';
import { noTracer, type Tracer } from '../tracing/tracer.js';

/**
 * `POST /api/events/receive`, after the OIDC token was verified. Wire-compatible with the
 * public zekt-action: `{ eventType, payload, repository?, workflowRunId?, workflow?, triggeredBy?,
 * commitSha?, ref?, timestamp? }`. Identity comes from the token's claims; the body may repeat the
 * repository and run id, and must then agree with them.
 */
export const MESSAGE_PAYLOAD_LIMIT_BYTES = 512 * 1024;

export interface MessageBody {
  eventType?: unknown;
  payload?: unknown;
  repository?: unknown;
  workflowRunId?: unknown;
  workflow?: unknown;
  triggeredBy?: unknown;
  commitSha?: unknown;
  ref?: unknown;
  timestamp?: unknown;
}

export type MessageOutcome =
  | { outcome: 'invalid'; code: 'invalid_event_type' | 'invalid_payload' | 'json_too_deep'; detail: string }
  | { outcome: 'too_large'; detail: string }
  | { outcome: 'forbidden'; detail: string }
  | { outcome: 'not_enabled'; detail: string }
  | { outcome: 'already_routed'; detail: string }
  /** An enforced schema refused the message (or its check was stopped): nothing was stored. */
  | {
      outcome: 'schema_violation';
      code: 'payload_schema_violation' | 'schema_validation_timeout';
      detail: string;
      service: string;
      schemaVersion: number;
      errors: SchemaProblem[];
      errorCount: number;
    }
  | {
      outcome: 'stored';
      messageId: string;
      consumersNotified: number;
      replaced: boolean;
      /** Warn-mode schemas the message broke (accepted all the same). */
      violations: SchemaCheck[];
    };

export interface MessageIntakeOptions {
  store: Store;
  clock: Clock;
  /** Called when a message makes a waiting event due, to wake the router. */
  onEventDue: () => void;
  /** Deepest JSON nesting accepted in a payload sent as a string holding JSON. */
  maxJsonDepth: number;
  /** Spans of the run's trace (default: none). */
  tracer?: Tracer | undefined;
  /** Where messages are checked against their services' schemas (off the event loop, time-bound). */
  schemaChecks: SchemaCheckPool;
  metrics: Pick<Metrics, 'messageSchemaChecked'>;
}

export async function receiveMessage(
  options: MessageIntakeOptions,
  claims: ActionsClaims,
  body: MessageBody,
  headerRepository: string | undefined,
): Promise<MessageOutcome> {
  if (body.eventType === undefined || body.eventType === null || body.eventType === '') {
    return { outcome: 'invalid', code: 'invalid_event_type', detail: 'eventType is required' };
  }
  if (!isValidEventType(body.eventType)) {
    return {
      outcome: 'invalid',
      code: 'invalid_event_type',
      detail: describeInvalidEventType(body.eventType),
    };
  }
  for (const [where, value] of [
    ['body repository', body.repository],
    ['x-github-repository header', headerRepository],
  ] as const) {
    if (
      value !== undefined &&
      value !== null &&
      value !== '' &&
      String(value).toLowerCase() !== claims.repository.toLowerCase()
    ) {
      return {
        outcome: 'forbidden',
        detail: `the ${where} (${String(value)}) is not the repository the OIDC token was issued to (${claims.repository})`,
      };
    }
  }
  if (
    body.workflowRunId !== undefined &&
    body.workflowRunId !== null &&
    String(body.workflowRunId) !== String(claims.runId)
  ) {
    return {
      outcome: 'forbidden',
      detail: `workflowRunId ${String(body.workflowRunId)} is not the run the OIDC token was issued to (${claims.runId})`,
    };
  }
  const payload = normalizePayload(body.payload, options.maxJsonDepth);
  if (!payload.ok) return { outcome: 'invalid', code: payload.code, detail: payload.detail };
  const payloadJson = JSON.stringify(payload.value);
  const payloadBytes = Buffer.byteLength(payloadJson, 'utf8');
  if (payloadBytes > MESSAGE_PAYLOAD_LIMIT_BYTES) {
    return {
      outcome: 'too_large',
      detail: `the payload is ${payloadBytes} bytes serialized; the limit is ${MESSAGE_PAYLOAD_LIMIT_BYTES} bytes (512 KB)`,
    };
  }
  const runKey = { repositoryId: claims.repositoryId, runId: claims.runId, runAttempt: claims.runAttempt };
  const workflowPath = workflowPathFromRef(claims.workflowRef, claims.repository);
  // Checked before the transaction, which must not wait on the checking threads.
  const verdict = await checkMessage(options, claims.repositoryId, workflowPath, payloadJson);
  if (verdict.outcome === 'refused') return refusal(verdict);
  const now = options.clock.now();

  const outcome = await options.store
    .transaction(async (trx): Promise<MessageOutcome & { wake?: boolean }> => {
      // First, and on PostgreSQL under the run's lock: a completion webhook of this run being
      // routed right now commits before this looks for its event (store/accounts.ts).
      const repository = await getRepositoryLockingRun(trx, options.store.dialect, runKey);
      if (!repository?.provider_enabled || repository.removed_at !== null) {
        return {
          outcome: 'not_enabled',
          detail: `${claims.repository} is not enabled as a Zekt provider repository: enable it in the console (Provider → Zekt Repos) or with PUT /api/v1/repositories/${claims.repository}/provider`,
        };
      }
      // The run's event is read under a row lock (PostgreSQL) before the message is written: a router
      // routing that event concurrently either committed first (then we see it routed: 409) or skips
      // it until we commit (then it sees the message). A completion webhook routing its own new event
      // waits for the run's lock above. So a 201 always means the message will be delivered with its
      // run. Event first, then message: the router takes them in that order too (it locks the event,
      // then marks the message routed), so a message replaced while its event is routed cannot
      // deadlock with the router.
      const event = await lockEventByRunKey(trx, options.store.dialect, runKey);
      if (event && event.route_status !== 'pending') throw new RunAlreadyRouted();
      const { messageId, replaced } = await upsertMessage(
        trx,
        {
          ...runKey,
          accountId: repository.account_id,
          workflowPath,
          eventType: body.eventType as string,
          payloadJson,
          payloadBytes,
          schemaVersions: Object.keys(verdict.versions).length > 0 ? verdict.versions : null,
          sender: {
            actor: claims.actor,
            workflowRef: claims.workflowRef,
            sha: claims.sha,
            ref: claims.ref,
            eventName: claims.eventName,
            ...(typeof body.timestamp === 'string' ? { sentAt: body.timestamp } : {}),
          },
        },
        now,
      );
      await countUsage(trx, repository.account_id, 'messagesReceived', now);
      // A replaced message takes the place of its predecessor's violations too.
      if (replaced || verdict.violations.length > 0) {
        await recordMessageViolations(
          trx,
          { ...runKey, accountId: repository.account_id },
          verdict.violations,
          now,
        );
      }
      if (verdict.violations.length > 0) {
        await countUsage(trx, repository.account_id, 'messageSchemaViolations', now);
      }
      let wake = false;
      if (event && event.route_after > now) {
        // The event was waiting for this message (grace period): route it now.
        await trx
          .updateTable('events')
          .set({ route_after: now })
          .where('event_id', '=', event.event_id)
          .execute();
        wake = true;
      }
      const consumersNotified = await countConsumers(trx, claims.repositoryId, workflowPath);
      return {
        outcome: 'stored',
        messageId,
        consumersNotified,
        replaced,
        violations: verdict.violations,
        wake,
      };
    })
    .catch((error: unknown) => {
      if (!(error instanceof RunAlreadyRouted)) throw error;
      return {
        outcome: 'already_routed' as const,
        detail: `run ${claims.runId} attempt ${claims.runAttempt} was already routed; send the message before the workflow finishes`,
      };
    });
  recordMessageSpan(options.tracer ?? noTracer, {
    run: { ...runKey, repository: claims.repository, workflowPath },
    eventType: body.eventType as string,
    startMs: now,
    outcome: outcome.outcome,
    messageId: outcome.outcome === 'stored' ? outcome.messageId : undefined,
    bytes: payloadBytes,
  });
  if (outcome.outcome === 'stored' && outcome.wake) options.onEventDue();
  if (outcome.outcome === 'stored') {
    const { wake: _wake, ...stored } = outcome;
    return stored;
  }
  return outcome;
}

/**
 * Checks the message against the schema in force of every service of its workflow whose
 * enforcement is not `off` (domain/message-schema.ts decides what the checks mean together).
 */
async function checkMessage(
  options: MessageIntakeOptions,
  repositoryId: number,
  workflowPath: string | null,
  payloadJson: string,
): Promise<
  Extract<MessageVerdict, { outcome: 'accepted' }> | Extract<MessageVerdict, { outcome: 'refused' }>
> {
  if (workflowPath === null) return { outcome: 'accepted', violations: [], versions: {} };
  const db = options.store.db;
  const schemas = await schemasInForce(db, repositoryId, workflowPath);
  if (schemas.length === 0) return { outcome: 'accepted', violations: [], versions: {} };
  const checks = await Promise.all(
    schemas.map(async (schema): Promise<SchemaCheck> => {
      const outcome = await options.schemaChecks.validate({
        key: `${schema.serviceId}@${schema.version}`,
        loadSchema: () => loadSchemaText(db, schema.serviceId, schema.version),
        payloadJson,
      });
      return { ...schema, ...outcome };
    }),
  );
  const verdict = decideMessage(checks);
  if (checks.some((c) => c.timedOut)) options.metrics.messageSchemaChecked('stopped');
  options.metrics.messageSchemaChecked(
    verdict.outcome === 'refused' ? 'refused' : verdict.violations.length > 0 ? 'violation' : 'valid',
  );
  return verdict;
}

function refusal(verdict: Extract<MessageVerdict, { outcome: 'refused' }>): MessageOutcome {
  const { check, refusedBy } = verdict;
  const others =
    refusedBy.length > 1
      ? ` (and of ${refusedBy
          .slice(1)
          .map((c) => c.slug)
          .join(', ')})`
      : '';
  const first = check.errors[0];
  return {
    outcome: 'schema_violation',
    code: check.timedOut ? 'schema_validation_timeout' : 'payload_schema_violation',
    detail: check.timedOut
      ? `the message could not be checked against version ${check.version} of the schema of service ${check.slug}${others}: ${first?.message ?? 'the check was stopped'}`
      : `the message does not match version ${check.version} of the schema of service ${check.slug}${others}, which is enforced: ${check.errorCount} violation(s), the first ${first?.pointer || '(the message)'}: ${first?.message ?? ''}. Fix the message, or check it first with zekt schema check`,
    service: check.slug,
    schemaVersion: check.version,
    errors: check.errors,
    errorCount: check.errorCount,
  };
}

/** Thrown inside the transaction so the message written before the check is rolled back. */
class RunAlreadyRouted extends Error {}

/** Consumers that will receive the run: the approved subscriptions, if the workflow is whitelisted. */
async function countConsumers(
  db: Store['db'],
  repositoryId: number,
  workflowPath: string | null,
): Promise<number> {
  if (workflowPath === null) return 0;
  const workflow = await getWorkflow(db, repositoryId, workflowPath);
  if (!workflow?.whitelisted) return 0;
  return (await routableSubscriptions(db, repositoryId, workflowPath)).length;
}

/** `payload` is any JSON value, or a string holding JSON (what the action's input is). */
function normalizePayload(
  value: unknown,
  maxJsonDepth: number,
): { ok: true; value: unknown } | { ok: false; code: 'invalid_payload' | 'json_too_deep'; detail: string } {
  if (value === undefined) return { ok: true, value: {} };
  if (typeof value !== 'string') return { ok: true, value };
  try {
    return { ok: true, value: parseBoundedJson(value, maxJsonDepth) };
  } catch (error) {
    if (error instanceof JsonTooDeepError) {
      return {
        ok: false,
        code: 'json_too_deep',
        detail: `payload holds JSON nested more than ${maxJsonDepth} levels deep (ZEKT_MAX_JSON_DEPTH); flatten it`,
      };
    }
    return {
      ok: false,
      code: 'invalid_payload',
      detail: `payload is a string but not JSON (${(error as Error).message}); send a JSON value, or a string holding JSON`,
    };
  }
}
