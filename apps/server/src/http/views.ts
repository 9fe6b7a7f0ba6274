import { workflowFileName } from '../domain/workflow-path.js';
import type { DeliveryRecordRow } from '../store/delivery-records.js';
import type {
  AccountRow,
  DeliveryAttemptRow,
  RepositoryRow,
  ServiceRow,
  SubscriptionRow,
  WorkflowRow,
} from '../store/schema.js';
import { parseTags } from '../store/services.js';
import type {
  AccountView,
  AttemptView,
  DeliveryRecordView,
  RepositoryView,
  ServiceView,
  SubscriptionView,
  WorkflowView,
} from './api-schemas.js';

/**
 * JSON shapes of the management API (camelCase, ISO-8601 times). Rows never leave the server as
 * they are: these functions decide what a caller sees.
 */
export const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

/** A time that is always set. */
export const isoAt = (ms: number): string => new Date(ms).toISOString();

export function accountView(account: AccountRow): AccountView {
  return {
    id: account.account_id,
    login: account.login,
    type: account.type,
    installationId: account.installation_id,
    suspended: account.suspended_at !== null,
  };
}

export function repositoryView(repository: RepositoryRow): RepositoryView {
  return {
    id: repository.repository_id,
    fullName: repository.full_name,
    private: Boolean(repository.private),
    provider: { enabled: Boolean(repository.provider_enabled) },
    completionTracking: { enabled: Boolean(repository.completion_enabled) },
  };
}

export function workflowView(workflow: WorkflowRow): WorkflowView {
  return {
    file: workflowFileName(workflow.path),
    path: workflow.path,
    name: workflow.name,
    whitelisted: Boolean(workflow.whitelisted),
    blockedCount: workflow.blocked_count,
    firstSeenAt: iso(workflow.first_seen_at),
    lastSeenAt: iso(workflow.last_seen_at),
  };
}

export function serviceView(
  service: ServiceRow,
  names: { provider: string; repository: string },
): ServiceView {
  return {
    id: service.service_id,
    provider: names.provider,
    repository: names.repository,
    workflow: workflowFileName(service.workflow_path),
    workflowPath: service.workflow_path,
    slug: service.slug,
    eventType: service.event_type,
    description: service.description,
    tags: parseTags(service.tags),
    visibility: service.visibility,
    schemaVersion: service.schema_version,
    enforcement: service.schema_enforcement,
    published: Boolean(service.published),
    createdAt: isoAt(service.created_at),
    updatedAt: isoAt(service.updated_at),
  };
}

export function subscriptionView(
  subscription: SubscriptionRow,
  names: {
    provider: string;
    service: ServiceRow;
    providerRepository: string;
    consumer: string;
    consumerRepository: string;
    completionTracking: boolean;
  },
): SubscriptionView {
  return {
    id: subscription.subscription_id,
    status: subscription.status,
    durable: Boolean(subscription.durable),
    service: { id: names.service.service_id, slug: names.service.slug, eventType: names.service.event_type },
    provider: {
      account: names.provider,
      repository: names.providerRepository,
      workflow: workflowFileName(names.service.workflow_path),
    },
    consumer: { account: names.consumer, repository: names.consumerRepository },
    deliversTo: names.consumerRepository,
    completionTracking: names.completionTracking,
    deliveryMode: subscription.delivery_mode,
    workflowDispatch:
      subscription.delivery_mode === 'workflow_dispatch' && subscription.dispatch_workflow !== null
        ? { workflow: subscription.dispatch_workflow, ref: subscription.dispatch_ref }
        : null,
    requestedAt: isoAt(subscription.requested_at),
    decidedAt: iso(subscription.decided_at),
  };
}

/**
 * A delivery record as docs/api.md lists its fields (camelCase, ISO times). `attempts` is included when
 * the caller loaded them (single-record views); lists leave it out.
 */
export function deliveryRecordView(
  row: DeliveryRecordRow,
  attempts?: DeliveryAttemptRow[],
): DeliveryRecordView {
  return {
    deliveryId: row.delivery_id,
    correlationId: row.correlation_id,
    connectionId: row.subscription_id,
    deliveryStatus: row.status,
    durable: Boolean(row.durable),
    dispatchedAt: isoAt(row.dispatched_at),
    confirmedAt: iso(row.confirmed_at),
    completedAt: iso(row.completed_at),
    consumerWorkflowConclusion: row.consumer_conclusion,
    isFinalized: Boolean(row.is_finalized),
    confirmationAttempts: row.confirmation_attempts,
    retryNumber: row.retry_number,
    isReplay: row.replay_of !== null,
    notStartedAt: iso(row.not_started_at),
    provider: {
      account: row.provider_login,
      repository: row.provider_repository,
      workflow: row.workflow_path,
      runId: row.correlation_id,
      runAttempt: row.run_attempt,
      runUrl: runUrl(row.run_summary),
    },
    consumer: { account: row.consumer_login, repository: row.consumer_repository },
    eventType: row.event_type,
    dispatch: {
      state: row.dispatch_state,
      attempts: row.attempt_count,
      nextAttemptAt: row.dispatch_state === 'pending' ? iso(row.next_attempt_at) : null,
      payloadByReference: Boolean(row.payload_by_reference),
    },
    platformResponse:
      row.platform_response === null
        ? null
        : (JSON.parse(row.platform_response) as DeliveryRecordView['platformResponse']),
    consumerRun:
      row.consumer_run_id === null
        ? null
        : {
            id: Number(row.consumer_run_id),
            url: row.consumer_run_url ?? '',
            htmlUrl: row.consumer_run_html_url ?? '',
          },
    ...(attempts === undefined ? {} : { attempts: attempts.map(attemptView) }),
    ...(row.replayed_by === null ? {} : { replayedBy: row.replayed_by }),
    ...(row.replay_of === null ? {} : { replayOf: row.replay_of }),
    ...(row.failure_reason === null ? {} : { failureReason: row.failure_reason }),
  };
}

/** The provider run's page, from the summary kept at ingestion. */
function runUrl(summary: string | null): string | null {
  if (summary === null) return null;
  const parsed = JSON.parse(summary) as { htmlUrl?: unknown };
  return typeof parsed.htmlUrl === 'string' ? parsed.htmlUrl : null;
}

export function attemptView(attempt: DeliveryAttemptRow): AttemptView {
  return {
    number: attempt.number,
    at: isoAt(attempt.started_at),
    durationMs: attempt.duration_ms,
    outcome: attempt.outcome,
    status: attempt.status_code,
    category: attempt.error_category,
    message: attempt.error_message,
    headers:
      attempt.response_headers === null
        ? null
        : (JSON.parse(attempt.response_headers) as Record<string, string>),
  };
}
