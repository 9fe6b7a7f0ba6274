import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely';
import type { DeliveryMode } from '../domain/delivery-mode.js';
import type { Enforcement } from '../domain/message-schema.js';
import type { SubscriptionStatus } from '../domain/subscription-state.js';

export type { SubscriptionStatus };

/**
 * The store's tables, in the glossary's words (docs/glossary.md). Conventions:
 * - every `*_at` column is Unix epoch milliseconds (UTC);
 * - flags are booleans (SQLite stores 0/1; read them with `Boolean(x)`);
 * - JSON documents are text, written and parsed by the store functions;
 * - GitHub's numeric ids (accounts, repositories, installations, hooks, runs) are numbers.
 */
type Flag = ColumnType<boolean | number, boolean, boolean>;
type Timestamp = number;

export interface AccountsTable {
  account_id: number;
  login: string;
  type: string;
  installation_id: number | null;
  installed_at: Timestamp | null;
  suspended_at: Timestamp | null;
  uninstalled_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface RepositoriesTable {
  repository_id: number;
  account_id: number;
  full_name: string;
  name: string;
  private: Flag;
  provider_enabled: Flag;
  completion_enabled: Flag;
  removed_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type HookRole = 'provider' | 'completion';

export interface RepositoryHooksTable {
  repository_id: number;
  role: HookRole;
  hook_id: number | null;
  secret_encrypted: string;
  url: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UsersTable {
  user_id: string;
  github_id: number | null;
  login: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type MembershipSource = 'installer' | 'oauth' | 'operator';

export interface MembershipsTable {
  user_id: string;
  account_id: number;
  source: MembershipSource;
  created_at: Timestamp;
}

export interface ApiTokensTable {
  token_id: string;
  user_id: string;
  token_hash: string;
  name: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  /** Null: never (the operator's `zekt token create`). */
  expires_at: Timestamp | null;
}

/** A console session (GitHub OAuth login); only the hash of its cookie value is kept. */
export interface SessionsTable {
  session_hash: string;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface WorkflowsTable {
  repository_id: number;
  path: string;
  name: string | null;
  whitelisted: Flag;
  blocked_count: number;
  first_seen_at: Timestamp | null;
  last_seen_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type ServiceVisibility = 'public' | 'organization';

export interface ServicesTable {
  service_id: string;
  account_id: number;
  repository_id: number;
  workflow_path: string;
  slug: string;
  event_type: string;
  description: string;
  tags: string;
  visibility: ServiceVisibility;
  published: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The message schema in force (migration 0015); null: the service has none. */
  schema_version: ColumnType<number | null, number | null | undefined, number | null>;
  schema_enforcement: ColumnType<Enforcement, Enforcement | undefined, Enforcement>;
  /** The version in force refuses a missing message (routing blocks or records such a run). */
  schema_requires_message: ColumnType<boolean | number, boolean | undefined, boolean>;
}

/** One version of a service's message schema; a version is never changed once written. */
export interface ServiceSchemasTable {
  service_id: string;
  version: number;
  account_id: number;
  /** The schema as JSON text. */
  schema: string;
  schema_bytes: number;
  /** An example message (JSON text), checked against the schema when saved; shown in the Directory. */
  example: string | null;
  requires_message: Flag;
  /** JSON: the compatibility report against the version before (domain/schema-compatibility.ts). */
  compatibility: string;
  created_by: string;
  created_at: Timestamp;
}

/** A message (or a missing one) that broke a schema in force: what the provider sees per run. */
export interface SchemaViolationsTable {
  violation_id: string;
  account_id: number;
  service_id: string;
  schema_version: number;
  enforcement: Enforcement;
  kind: 'invalid_message' | 'missing_message';
  /** `accepted`: stored and delivered all the same (warn); `blocked`: the run was blocked (enforce). */
  outcome: 'accepted' | 'blocked';
  repository_id: number;
  run_id: number;
  run_attempt: number;
  /** JSON: the first violations, `[{ pointer, message }]`. */
  errors: string;
  error_count: number;
  created_at: Timestamp;
}

export interface SubscriptionsTable {
  subscription_id: string;
  service_id: string;
  consumer_account_id: number;
  consumer_repository_id: number;
  status: SubscriptionStatus;
  durable: Flag;
  /** `repository_dispatch` or `workflow_dispatch` (domain/delivery-mode.ts). */
  delivery_mode: ColumnType<DeliveryMode, DeliveryMode | undefined, DeliveryMode>;
  /** The workflow file name a `workflow_dispatch` goes to; null in `repository_dispatch` mode. */
  dispatch_workflow: string | null;
  /** The ref a `workflow_dispatch` runs on; null: the repository's default branch. */
  dispatch_ref: string | null;
  requested_by: string;
  requested_at: Timestamp;
  decided_by: string | null;
  decided_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/**
 * GUIDs processed before migration 0010 (and by a previous version during a rolling upgrade), keyed
 * on the GUID alone: read, no longer written. `hook_id` null: the hook is unknown (counts for all).
 */
export interface WebhookDeliveriesTable {
  delivery_guid: string;
  event: string;
  hook_id: number | null;
  received_at: Timestamp;
}

/**
 * One `X-GitHub-Delivery` GUID processed through one hook: the hook Zekt placed whose secret signed
 * it, or 0 for the App's webhook. GitHub gives one event the same GUID on every hook receiving it.
 */
export interface WebhookReceiptsTable {
  delivery_guid: string;
  hook_id: number;
  event: string;
  received_at: Timestamp;
}

export type RouteStatus = 'pending' | 'routed' | 'blocked';

export interface EventsTable {
  event_id: string;
  repository_id: number;
  run_id: number;
  run_attempt: number;
  account_id: number;
  workflow_path: string;
  workflow_name: string;
  conclusion: string | null;
  summary: string;
  received_at: Timestamp;
  route_after: Timestamp;
  route_status: RouteStatus;
  routed_at: Timestamp | null;
  message_id: string | null;
  deliveries_created: number;
  /** W3C `traceparent` of the webhook's span, which routing continues (migration 0016); null: not traced. */
  trace_parent: string | null;
}

export type MessageStatus = 'pending' | 'routed';

export interface MessagesTable {
  message_id: string;
  repository_id: number;
  run_id: number;
  run_attempt: number;
  account_id: number;
  workflow_path: string | null;
  event_type: string;
  payload: string;
  payload_bytes: number;
  sender: string;
  status: MessageStatus;
  received_at: Timestamp;
  updated_at: Timestamp;
  /** JSON `{ serviceId: version }`: the schemas the message was checked against; null: none. */
  schema_versions: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ArchivesTable {
  event_id: string;
  summary: string;
  has_message: Flag;
  payload: string | null;
  payload_bytes: number;
  archived_at: Timestamp;
  expires_at: Timestamp;
}

export type DeliveryStatus = 'Dispatched' | 'Confirmed' | 'Completed' | 'Failed';
export type DispatchState = 'pending' | 'accepted' | 'failed';

export interface DeliveriesTable {
  delivery_id: string;
  event_id: string;
  subscription_id: string;
  service_id: string;
  provider_account_id: number;
  provider_repository_id: number;
  consumer_account_id: number;
  consumer_repository_id: number;
  correlation_id: string;
  run_attempt: number;
  event_type: string;
  durable: Flag;
  status: DeliveryStatus;
  dispatch_state: DispatchState;
  attempt_count: number;
  next_attempt_at: Timestamp | null;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  dispatched_at: Timestamp;
  confirmed_at: Timestamp | null;
  completed_at: Timestamp | null;
  consumer_conclusion: string | null;
  is_finalized: Flag;
  confirmation_attempts: number;
  retry_number: number;
  platform_response: string | null;
  failure_reason: string | null;
  replay_of: string | null;
  replayed_by: string | null;
  payload_by_reference: Flag;
  slot_reserved: Flag;
  /** Accepted by GitHub, durable, and no sign of its consumer workflow yet (domain/not-started.ts). */
  awaiting_start_since: Timestamp | null;
  /** When the delivery was flagged not started; kept when the workflow starts after all. */
  not_started_at: Timestamp | null;
  /** When completion tracking first saw a workflow run of the delivery (`requested`), or GitHub named it. */
  run_seen_at: Timestamp | null;
  /** The consumer run GitHub created for a `workflow_dispatch` (its answer's `workflow_run_id`). */
  consumer_run_id: number | null;
  /** Its API URL (`run_url`) and page (`html_url`). */
  consumer_run_url: string | null;
  consumer_run_html_url: string | null;
  /** When Zekt reads the consumer run next (domain/run-following.ts); null: not followed. */
  run_follow_at: Timestamp | null;
  /** Reads of the consumer run made so far. */
  run_follow_reads: ColumnType<number, number | undefined, number>;
  updated_at: Timestamp;
  /** W3C `traceparent` of the delivery's span: its attempts and reports are children (migration 0016); null: not traced. */
  trace_parent: string | null;
  /** The schema version its message was checked against (`client_payload.zekt.schemaVersion`). */
  schema_version: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface DeliveryAttemptsTable {
  attempt_id: string;
  delivery_id: string;
  /** The delivery's connection, so diagnostics read a connection's attempts by time (migration 0008). */
  subscription_id: string;
  number: number;
  started_at: Timestamp;
  duration_ms: number;
  outcome: 'accepted' | 'failed';
  status_code: number | null;
  error_category: string | null;
  error_message: string | null;
  response_headers: string | null;
}

/** One counter of one account on one day (UTC, `YYYY-MM-DD`); a month is the sum of its days. */
export interface UsageDailyTable {
  account_id: number;
  day: string;
  counter: string;
  value: number;
}

/** Counts added since migration 0009, a counter spread over a few rows (store/usage.ts). */
export interface UsageDailyShardsTable extends UsageDailyTable {
  shard: number;
}

export interface PacingSlotsTable {
  account_id: number;
  next_slot_at: Timestamp;
}

/** Requests counted in one fixed window of one rate-limit bucket. */
export interface RateLimitCountersTable {
  bucket: string;
  window_start: Timestamp;
  count: number;
}

/** The replay an `Idempotency-Key` produced, so the same request returns it again. */
export interface ReplayRequestsTable {
  requested_by: string;
  delivery_id: string;
  idempotency_key: string;
  replay_id: string;
  created_at: Timestamp;
}

/** A named lease: work only one process may do at a time, until `expires_at`. */
export interface LeasesTable {
  name: string;
  owner: string;
  expires_at: Timestamp;
}

/** The reconciler's requests before migration 0010 (copied into `webhook_redeliveries`); no longer read. */
export interface RedeliveryRequestsTable {
  delivery_guid: string;
  /** Which webhook: `app`, or `repository:<hook id>`. */
  hook: string;
  github_delivery_id: number;
  event: string;
  action: string | null;
  requested_at: Timestamp;
  recovered_at: Timestamp | null;
}

/**
 * A webhook (GUID × `app` or `repository:<hook id>`) the reconciler asked GitHub to redeliver:
 * `asks` times, the last at `asked_at` for the attempt `github_delivery_id`; `recovered_at` once it
 * arrived, `gave_up_at` once it failed after the last ask allowed (domain/reconcile.ts).
 */
export interface WebhookRedeliveriesTable {
  delivery_guid: string;
  hook: string;
  github_delivery_id: number;
  event: string;
  action: string | null;
  asks: number;
  requested_at: Timestamp;
  asked_at: Timestamp;
  recovered_at: Timestamp | null;
  gave_up_at: Timestamp | null;
}

/** `unsent`: no ZEKT_ALERT_URL was set when it was raised; it is only listed. */
export type AlertStatus = 'pending' | 'sent' | 'failed' | 'unsent';

/** The alert outbox: operational events sent to ZEKT_ALERT_URL, leased like deliveries. */
export interface AlertsTable {
  alert_id: string;
  /** The account the alert concerns; its members see it in the console. */
  account_id: number;
  kind: string;
  /** Alerts with the same key inside the dedup window are not raised again. */
  dedup_key: string;
  /** The JSON body sent, exactly. */
  payload: string;
  status: AlertStatus;
  attempts: number;
  next_attempt_at: Timestamp | null;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  last_error: string | null;
  sent_at: Timestamp | null;
  created_at: Timestamp;
}

/** The health a connection was last seen in, so an alert goes out when it changes. */
export interface ConnectionHealthStatesTable {
  subscription_id: string;
  health: string;
  updated_at: Timestamp;
}

/** One change of configuration, as one account concerned by it sees it. */
export interface AuditEntriesTable {
  audit_id: string;
  account_id: number | null;
  actor_user_id: string | null;
  actor_login: string;
  actor_token_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  /** JSON: the changed fields before and after the change. */
  before: string | null;
  after: string | null;
  created_at: Timestamp;
}

export type RecoveryStatus = 'running' | 'completed' | 'cancelled';

/** A bulk recovery: replay the failed deliveries of one connection dispatched in a window. */
export interface RecoveriesTable {
  recovery_id: string;
  subscription_id: string;
  requested_by: string;
  idempotency_key: string | null;
  /** Comma-separated delivery states to recover (`failed`). */
  states: string;
  since_at: Timestamp;
  until_at: Timestamp;
  status: RecoveryStatus;
  total: number;
  replayed: number;
  skipped: number;
  /** The last delivery id handled: the job resumes after it. */
  position: string | null;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  /** When a worker last started a batch of it (domain/recovery.ts `recoveryTurns`). */
  turn_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
}

/** A delivery one recovery handled: replayed (with the replay's id) or skipped. */
export interface RecoveryItemsTable {
  recovery_id: string;
  delivery_id: string;
  outcome: 'replayed' | 'skipped';
  replay_id: string | null;
  created_at: Timestamp;
}

/** The GitHub App registered through setup (one row, slot `github_app`), sealed with ZEKT_SECRET. */
export interface AppCredentialsTable {
  slot: 'github_app';
  /** The secret box (`security/secret-box.ts`) of the credentials as JSON (`setup/app-credentials.ts`). */
  sealed: string;
  registered_at: Timestamp;
}

/** The random nonce the setup code is derived from with ZEKT_SECRET (one row, slot `setup`). */
export interface SetupCodesTable {
  slot: 'setup';
  nonce: string;
  created_at: Timestamp;
}

/** A browser that presented the setup code: the SHA-256 of its cookie value. */
export interface SetupSessionsTable {
  session_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** A manifest flow's `state` (SHA-256), bound to the setup session that started it; single use. */
export interface SetupStatesTable {
  state_hash: string;
  session_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface Database {
  accounts: AccountsTable;
  repositories: RepositoriesTable;
  repository_hooks: RepositoryHooksTable;
  users: UsersTable;
  memberships: MembershipsTable;
  api_tokens: ApiTokensTable;
  sessions: SessionsTable;
  workflows: WorkflowsTable;
  services: ServicesTable;
  subscriptions: SubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_receipts: WebhookReceiptsTable;
  events: EventsTable;
  messages: MessagesTable;
  archives: ArchivesTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  usage_daily: UsageDailyTable;
  usage_daily_shards: UsageDailyShardsTable;
  pacing_slots: PacingSlotsTable;
  rate_limit_counters: RateLimitCountersTable;
  replay_requests: ReplayRequestsTable;
  leases: LeasesTable;
  redelivery_requests: RedeliveryRequestsTable;
  webhook_redeliveries: WebhookRedeliveriesTable;
  alerts: AlertsTable;
  connection_health_states: ConnectionHealthStatesTable;
  audit_entries: AuditEntriesTable;
  recoveries: RecoveriesTable;
  recovery_items: RecoveryItemsTable;
  service_schemas: ServiceSchemasTable;
  schema_violations: SchemaViolationsTable;
  app_credentials: AppCredentialsTable;
  setup_codes: SetupCodesTable;
  setup_sessions: SetupSessionsTable;
  setup_states: SetupStatesTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type RepositoryRow = Selectable<RepositoriesTable>;
export type RepositoryHookRow = Selectable<RepositoryHooksTable>;
export type UserRow = Selectable<UsersTable>;
export type WorkflowRow = Selectable<WorkflowsTable>;
export type ServiceRow = Selectable<ServicesTable>;
export type SubscriptionRow = Selectable<SubscriptionsTable>;
export type EventRow = Selectable<EventsTable>;
export type MessageRow = Selectable<MessagesTable>;
export type ArchiveRow = Selectable<ArchivesTable>;
export type DeliveryRow = Selectable<DeliveriesTable>;
export type NewDelivery = Insertable<DeliveriesTable>;
export type DeliveryUpdate = Updateable<DeliveriesTable>;
export type DeliveryAttemptRow = Selectable<DeliveryAttemptsTable>;
export type AuditEntryRow = Selectable<AuditEntriesTable>;
export type RecoveryRow = Selectable<RecoveriesTable>;
export type ServiceSchemaRow = Selectable<ServiceSchemasTable>;
export type SchemaViolationRow = Selectable<SchemaViolationsTable>;
