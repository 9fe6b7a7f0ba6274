import Type, { type Static, type TSchema } from 'typebox';
import { ALERT_SEND_FAILURES, type AlertSendFailure } from '../domain/alerts.js';
import { USAGE_COUNTERS } from '../domain/usage.js';
import { PROBLEMS, type ProblemCode } from './problem-codes.js';

/**
 * The JSON shapes the API answers with, as TypeBox schemas. Each route declares them as its
 * `response` schemas, so Fastify serialises with them (fast-json-stringify), the committed
 * docs/openapi.json describes real bodies, and the console's client is generated from that
 * document. views.ts builds these shapes from rows; its functions are typed by them.
 */

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Time = Type.String({ format: 'date-time' });
const NullableTime = Nullable(Time);

/** Every list pages: at most 100 items, and the cursor of the next page (null on the last). */
const NextCursor = Nullable(
  Type.String({ description: 'pass back as ?cursor= for the next page; null on the last page' }),
);

export const SchemaProblemSchema = Type.Object({
  pointer: Type.String({
    description: 'JSON Pointer (RFC 6901) of the value at fault; "" for the whole document',
  }),
  message: Type.String(),
});

export const AccountSchema = Type.Object({
  id: Type.Integer(),
  login: Type.String(),
  type: Type.String({ description: 'User or Organization' }),
  installationId: Nullable(Type.Integer()),
  suspended: Type.Boolean(),
});

export const MeSchema = Type.Object({
  user: Type.Object({ login: Type.String(), id: Nullable(Type.Integer()) }),
  accounts: Type.Array(AccountSchema),
  installUrl: Nullable(
    Type.String({
      description: "where to install the Zekt GitHub App on an account (the App's public page)",
    }),
  ),
});

const CredentialSource = Type.Union([Type.Literal('environment'), Type.Literal('store')], {
  description:
    'environment: GITHUB_APP_ID and the other App settings are set (they win); store: registered through setup',
});

export const SetupStatusSchema = Type.Object({
  configured: Type.Boolean({ description: 'a GitHub App is configured; false: setup mode' }),
  source: Nullable(CredentialSource),
  setupSession: Type.Boolean({ description: 'this browser opened the setup URL with its code' }),
  app: Nullable(
    Type.Object(
      {
        appId: Type.Integer(),
        slug: Nullable(Type.String()),
        name: Nullable(Type.String()),
        owner: Nullable(Type.String()),
        htmlUrl: Nullable(Type.String()),
        installUrl: Nullable(Type.String({ description: 'where to install the App on an account' })),
      },
      { description: 'the App, told to a browser with a setup session once it is configured' },
    ),
  ),
  installed: Type.Boolean({ description: 'the App is installed on an account (told to a setup session)' }),
  githubUrl: Type.String({ description: "GitHub's web root the App is registered on (GITHUB_URL)" }),
  defaultName: Type.String({ description: 'the name the setup page suggests for the App' }),
});

export const SetupManifestRequestSchema = Type.Object(
  {
    account: Type.Union([Type.Literal('user'), Type.Literal('organization')], {
      description: 'register the App for your own account, or for an organisation you own',
    }),
    organization: Type.Optional(Type.String({ maxLength: 39, description: 'the organisation’s login' })),
    name: Type.String({ minLength: 1, maxLength: 100 }),
    public: Type.Boolean({
      description:
        'whether accounts other than its owner may install the App: true when providers and consumers are different organisations',
    }),
  },
  { additionalProperties: false },
);

export const SetupManifestSchema = Type.Object({
  action: Type.String({ description: 'where the browser posts the manifest: GitHub’s page, with the state' }),
  manifest: Type.String({ description: 'the GitHub App manifest as JSON: the form field `manifest`' }),
});

export const AppSettingsSchema = Type.Object({
  source: CredentialSource,
  appId: Type.Integer(),
  slug: Nullable(Type.String()),
  name: Nullable(Type.String()),
  owner: Nullable(Type.String()),
  htmlUrl: Nullable(Type.String()),
  installUrl: Nullable(Type.String()),
  registeredAt: NullableTime,
});

export const RepositorySchema = Type.Object({
  id: Type.Integer(),
  fullName: Type.String(),
  private: Type.Boolean(),
  provider: Type.Object({ enabled: Type.Boolean() }),
  completionTracking: Type.Object({ enabled: Type.Boolean() }),
});

export const RepositoryPageSchema = Type.Object({
  account: Type.String(),
  repositories: Type.Array(RepositorySchema),
  nextCursor: NextCursor,
});

export const WorkflowSchema = Type.Object({
  file: Type.String({ description: 'file name under .github/workflows, e.g. deploy.yml' }),
  path: Type.String(),
  name: Nullable(Type.String()),
  whitelisted: Type.Boolean(),
  blockedCount: Type.Integer({ description: 'runs blocked because the workflow was not whitelisted' }),
  firstSeenAt: NullableTime,
  lastSeenAt: Nullable(
    Type.String({
      format: 'date-time',
      description: 'when a run of the workflow was last seen, to within a minute',
    }),
  ),
});

export const WorkflowPageSchema = Type.Object({
  repository: Type.String(),
  workflows: Type.Array(WorkflowSchema),
  nextCursor: NextCursor,
});

const Visibility = Type.Union([Type.Literal('public'), Type.Literal('organization')]);

const ServiceFields = {
  id: Type.String(),
  provider: Type.String({ description: 'the provider account' }),
  repository: Type.String(),
  workflow: Type.String(),
  workflowPath: Type.String(),
  slug: Type.String(),
  eventType: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  visibility: Visibility,
  schemaVersion: Nullable(
    Type.Integer({
      description: 'the version of the message schema in force; null: no schema (docs/contracts.md)',
    }),
  ),
  enforcement: Type.Union([Type.Literal('off'), Type.Literal('warn'), Type.Literal('enforce')], {
    description:
      'off: the schema is documentation only; warn: violations are recorded; enforce: refused (422)',
  }),
};

export const ServiceSchema = Type.Object({
  ...ServiceFields,
  published: Type.Boolean(),
  createdAt: Time,
  updatedAt: Time,
});

export const ServicePageSchema = Type.Object({
  services: Type.Array(ServiceSchema),
  nextCursor: NextCursor,
});

export const DirectoryServiceSchema = Type.Object(ServiceFields);

export const DirectoryPageSchema = Type.Object({
  services: Type.Array(DirectoryServiceSchema),
  nextCursor: NextCursor,
});

const Enforcement = Type.Union([Type.Literal('off'), Type.Literal('warn'), Type.Literal('enforce')]);

export const CompatibilitySchema = Type.Object({
  previousVersion: Nullable(Type.Integer({ description: 'the version compared with; null for the first' })),
  breaking: Type.Boolean({
    description: 'whether any change removes or narrows what the previous version accepted',
  }),
  changes: Type.Array(
    Type.Object({
      pointer: Type.String({ description: 'JSON Pointer into the schema' }),
      kind: Type.String({
        description:
          'property_removed, required_added, type_narrowed, enum_narrowed, additional_properties_closed, bound_tightened (breaking); property_added, required_removed, type_widened, enum_widened, additional_properties_opened, bound_loosened',
      }),
      breaking: Type.Boolean(),
      message: Type.String(),
    }),
  ),
});

export const SchemaVersionSchema = Type.Object({
  serviceId: Type.String(),
  version: Type.Integer(),
  enforcement: Enforcement,
  schema: Type.Unknown({ description: 'the JSON Schema (draft 2020-12)' }),
  example: Type.Unknown({ description: 'an example message that matches the schema; null: none' }),
  requiresMessage: Type.Boolean({
    description: 'the schema refuses null: a run that sends no message breaks it',
  }),
  compatibility: CompatibilitySchema,
  createdAt: Time,
  createdBy: Type.Optional(Type.String({ description: 'who saved it (provider members only)' })),
});

export const SchemaSaveSchema = Type.Object({
  ...SchemaVersionSchema.properties,
  changed: Type.Boolean({ description: 'whether this made (or, with dryRun, would make) a new version' }),
  saved: Type.Boolean({ description: 'false with ?dryRun=true' }),
});

export const SchemaVersionPageSchema = Type.Object({
  versions: Type.Array(SchemaVersionSchema),
  nextCursor: NextCursor,
});

export const SchemaViolationSchema = Type.Object({
  id: Type.String(),
  service: Type.Object({ id: Type.String(), slug: Type.String() }),
  schemaVersion: Type.Integer(),
  enforcement: Enforcement,
  kind: Type.Union([Type.Literal('invalid_message'), Type.Literal('missing_message')]),
  outcome: Type.Union([Type.Literal('accepted'), Type.Literal('blocked')], {
    description: 'accepted: stored and delivered all the same (warn); blocked: the run was blocked (enforce)',
  }),
  repository: Type.String({ description: 'the provider repository (owner/repo)' }),
  runId: Type.Integer(),
  runAttempt: Type.Integer(),
  errors: Type.Array(SchemaProblemSchema),
  errorCount: Type.Integer(),
  createdAt: Time,
});

export const SchemaViolationPageSchema = Type.Object({
  violations: Type.Array(SchemaViolationSchema),
  nextCursor: NextCursor,
});

export const SubscriptionStatusSchema = Type.Union([
  Type.Literal('requested'),
  Type.Literal('approved'),
  Type.Literal('denied'),
  Type.Literal('revoked'),
  Type.Literal('withdrawn'),
]);

export const DeliveryModeSchema = Type.Union(
  [Type.Literal('repository_dispatch'), Type.Literal('workflow_dispatch')],
  {
    description:
      'repository_dispatch: POST /repos/{owner}/{repo}/dispatches (every workflow listening for the event type runs); workflow_dispatch: one workflow file, whose run GitHub names in its answer, so Zekt links to it and follows it',
  },
);

export const SubscriptionSchema = Type.Object({
  id: Type.String(),
  status: SubscriptionStatusSchema,
  durable: Type.Boolean(),
  service: Type.Object({ id: Type.String(), slug: Type.String(), eventType: Type.String() }),
  provider: Type.Object({ account: Type.String(), repository: Type.String(), workflow: Type.String() }),
  consumer: Type.Object({ account: Type.String(), repository: Type.String() }),
  deliversTo: Type.String({ description: 'the consumer repository (owner/repo)' }),
  completionTracking: Type.Boolean({
    description:
      'whether COMPLETION is on for the consumer repository (Durable Delivery needs it, unless the subscription delivers by workflow_dispatch)',
  }),
  deliveryMode: DeliveryModeSchema,
  workflowDispatch: Nullable(
    Type.Object(
      {
        workflow: Type.String({
          description: 'the workflow file of the consumer repository, e.g. on-deploy.yml',
        }),
        ref: Nullable(Type.String({ description: 'the branch or tag it runs on; null: the default branch' })),
      },
      { description: 'where workflow_dispatch deliveries go; null in repository_dispatch mode' },
    ),
  ),
  requestedAt: Time,
  decidedAt: NullableTime,
});

export const SubscriptionPageSchema = Type.Object({
  subscriptions: Type.Array(SubscriptionSchema),
  nextCursor: NextCursor,
});

export const DeliveryStatusSchema = Type.Union([
  Type.Literal('Dispatched'),
  Type.Literal('Confirmed'),
  Type.Literal('Completed'),
  Type.Literal('Failed'),
]);

export const AttemptSchema = Type.Object({
  number: Type.Integer(),
  at: Time,
  durationMs: Type.Integer(),
  outcome: Type.Union([Type.Literal('accepted'), Type.Literal('failed')]),
  status: Nullable(Type.Integer({ description: "GitHub's HTTP status; null when no answer came" })),
  category: Nullable(Type.String({ description: 'error category of a failed attempt' })),
  message: Nullable(Type.String()),
  headers: Nullable(Type.Record(Type.String(), Type.String(), { description: 'response headers kept' })),
});

export const DeliveryRecordSchema = Type.Object({
  deliveryId: Type.String(),
  correlationId: Type.String(),
  connectionId: Type.String(),
  deliveryStatus: DeliveryStatusSchema,
  durable: Type.Boolean(),
  dispatchedAt: Time,
  confirmedAt: NullableTime,
  completedAt: NullableTime,
  consumerWorkflowConclusion: Nullable(Type.String()),
  isFinalized: Type.Boolean(),
  confirmationAttempts: Type.Integer(),
  retryNumber: Type.Integer({
    description:
      'failed dispatch attempts before the one GitHub accepted (0 = first try); while not accepted yet, the failed attempts so far',
  }),
  isReplay: Type.Boolean(),
  notStartedAt: Nullable(
    Type.String({
      format: 'date-time',
      description:
        'set when GitHub accepted this durable delivery but no consumer workflow run confirmed it or was seen by completion tracking within ZEKT_NOT_STARTED_AFTER: it stays Dispatched, flagged not started (no workflow on the default branch listens for its event type); kept if the workflow starts later',
    }),
  ),
  provider: Type.Object({
    account: Nullable(Type.String()),
    repository: Nullable(Type.String()),
    workflow: Nullable(Type.String()),
    runId: Type.String(),
    runAttempt: Type.Integer(),
    runUrl: Nullable(Type.String({ description: "the provider run's page on GitHub" })),
  }),
  consumer: Type.Object({ account: Nullable(Type.String()), repository: Nullable(Type.String()) }),
  eventType: Type.String(),
  dispatch: Type.Object({
    state: Type.Union([Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('failed')], {
      description: 'pending: GitHub has not accepted it yet; accepted; failed: given up',
    }),
    attempts: Type.Integer(),
    nextAttemptAt: NullableTime,
    payloadByReference: Type.Boolean(),
  }),
  platformResponse: Nullable(
    Type.Object(
      { status: Type.Integer(), at: Time, headers: Type.Record(Type.String(), Type.String()) },
      { description: "GitHub's answer to the accepted dispatch" },
    ),
  ),
  consumerRun: Nullable(
    Type.Object(
      {
        id: Type.Integer({ description: 'the workflow run id' }),
        url: Type.String({ description: 'the run in the REST API (run_url)' }),
        htmlUrl: Type.String({ description: "the run's page on GitHub" }),
      },
      {
        description:
          'the consumer workflow run GitHub created for a workflow_dispatch delivery (its answer to the dispatch); null for repository_dispatch, before GitHub answered, and on a GitHub Enterprise Server that does not answer with the run',
      },
    ),
  ),
  attempts: Type.Optional(Type.Array(AttemptSchema, { description: 'in single-record answers only' })),
  replayedBy: Type.Optional(Type.String()),
  replayOf: Type.Optional(Type.String()),
  failureReason: Type.Optional(Type.String()),
});

export const DeliveryPageSchema = Type.Object({
  deliveries: Type.Array(DeliveryRecordSchema),
  nextCursor: NextCursor,
});

export const DeliveryPayloadSchema = Type.Object({
  deliveryId: Type.String(),
  event: Type.Record(Type.String(), Type.Unknown(), {
    description: 'client_payload.zekt.event: the run as Zekt forwarded it',
  }),
  payload: Type.Unknown({ description: "the provider's message, unchanged; null when the run sent none" }),
  hasMessage: Type.Boolean(),
  archivedAt: Time,
  expiresAt: Time,
});

export const HealthSchema = Type.Union([
  Type.Literal('Healthy'),
  Type.Literal('Warning'),
  Type.Literal('Critical'),
]);

export const ConnectionSchema = Type.Object({
  id: Type.String(),
  status: SubscriptionStatusSchema,
  durable: Type.Boolean(),
  service: Type.Object({ id: Type.String(), slug: Type.String() }),
  provider: Type.Object({ account: Nullable(Type.String()), repository: Nullable(Type.String()) }),
  consumer: Type.Object({ account: Nullable(Type.String()), repository: Nullable(Type.String()) }),
  health: HealthSchema,
  hasEvents: Type.Boolean({
    description: 'false while the connection never had a delivery: the seed counts it Healthy',
  }),
  recentActivity: Type.Boolean({ description: 'a delivery within the last 7 days' }),
  successRate: Nullable(Type.Number({ description: 'percent over the last 24 h; null without deliveries' })),
  lastEventAt: NullableTime,
  stats: Type.Object({
    last24h: Type.Object({
      total: Type.Integer(),
      succeeded: Type.Integer(),
      failed: Type.Integer(),
      notStarted: Type.Integer({
        description: 'accepted by GitHub but no consumer workflow started (counted as not succeeded)',
      }),
    }),
    last7d: Type.Object({ total: Type.Integer() }),
    pending: Type.Integer({ description: 'deliveries GitHub has not accepted yet' }),
  }),
});

export const ConnectionPageSchema = Type.Object({
  connections: Type.Array(ConnectionSchema),
  thresholds: Type.Object({
    healthyPercent: Type.Number(),
    warningPercent: Type.Number(),
    windowHours: Type.Integer(),
    recentActivityDays: Type.Integer(),
  }),
  nextCursor: NextCursor,
});

export const ConnectionHistorySchema = Type.Object({
  connectionId: Type.String(),
  days: Type.Array(
    Type.Object({
      day: Type.String({ description: 'YYYY-MM-DD (UTC)' }),
      total: Type.Integer(),
      succeeded: Type.Integer(),
      failed: Type.Integer(),
      successRate: Nullable(Type.Number()),
    }),
  ),
});

const ErrorCategoryCounts = Type.Object({
  service_unavailable: Type.Integer(),
  timeout: Type.Integer(),
  auth: Type.Integer(),
  rate_limited: Type.Integer(),
  network: Type.Integer(),
  not_found: Type.Integer(),
  rejected: Type.Integer(),
  other: Type.Integer(),
  not_started: Type.Integer({
    description: 'deliveries GitHub accepted whose consumer workflow never started (not attempts)',
  }),
});

export const DiagnosticsSchema = Type.Object({
  connectionId: Type.String(),
  health: HealthSchema,
  successRate: Nullable(Type.Number()),
  window: Type.Object({ from: Time, to: Time, days: Type.Integer() }),
  categories: ErrorCategoryCounts,
  consumerFailures: Type.Integer({ description: 'deliveries the consumer workflow reported as failed' }),
  recentFailures: Type.Array(
    Type.Object({
      deliveryId: Type.String(),
      attempt: Type.Integer(),
      at: Time,
      category: Nullable(Type.String()),
      status: Nullable(Type.Integer()),
      message: Nullable(Type.String()),
    }),
  ),
  recommendations: Type.Array(Type.Object({ category: Type.String(), text: Type.String() })),
});

export const UsageCountersSchema = Type.Object(
  Object.fromEntries(USAGE_COUNTERS.map((name) => [name, Type.Integer()])) as Record<
    (typeof USAGE_COUNTERS)[number],
    ReturnType<typeof Type.Integer>
  >,
);

export const UsageSchema = Type.Object({
  month: Type.String(),
  usage: Type.Array(
    Type.Object({
      account: Type.String(),
      month: Type.String(),
      counters: UsageCountersSchema,
      days: Type.Array(
        Type.Object({ day: Type.String({ description: 'YYYY-MM-DD (UTC)' }), counters: UsageCountersSchema }),
        { description: 'every day of the month up to today, oldest first' },
      ),
    }),
  ),
});

export const BlockedSchema = Type.Object({
  account: Type.String(),
  month: Type.String(),
  eventsReceived: Type.Integer(),
  allowedEvents: Type.Integer(),
  blockedEvents: Type.Integer(),
  blockRate: Nullable(Type.Number({ description: 'percent of received events that were blocked' })),
  orphanedMessages: Type.Integer(),
  topWorkflows: Type.Array(
    Type.Object({
      repository: Type.String(),
      workflow: Type.String(),
      name: Nullable(Type.String()),
      blocked: Type.Integer(),
    }),
  ),
});

export const MessageAcceptedSchema = Type.Object({
  success: Type.Literal(true),
  eventId: Type.String(),
  consumersNotified: Type.Integer(),
  message: Type.String(),
  schemaViolations: Type.Optional(
    Type.Array(
      Type.Object({
        service: Type.String({ description: 'the service slug' }),
        schemaVersion: Type.Integer(),
        errors: Type.Array(SchemaProblemSchema, { description: 'the first 20' }),
        errorCount: Type.Integer(),
      }),
      {
        description:
          'warn-mode schemas the message does not match: accepted, recorded, shown to the provider',
      },
    ),
  ),
});

export const WebhookAnswerSchema = Type.Object({
  outcome: Type.Union([
    Type.Literal('accepted'),
    Type.Literal('duplicate'),
    Type.Literal('ignored'),
    Type.Literal('applied'),
    Type.Literal('pong'),
  ]),
  eventId: Type.Optional(Type.String()),
  detail: Type.Optional(Type.String()),
});

export const AuditEntrySchema = Type.Object({
  id: Type.String(),
  account: Nullable(Type.String({ description: 'the account that sees this entry (its login)' })),
  at: Time,
  actor: Type.Object({
    login: Type.String({ description: 'who made the change; `zekt token create` for the operator’s CLI' }),
    userId: Nullable(Type.String()),
    tokenId: Nullable(Type.String({ description: 'the API token used; null for the console and the CLI' })),
  }),
  action: Type.String({ description: 'what was done, e.g. provider.switch, subscription.approve' }),
  target: Type.Object({
    type: Type.String({
      description: 'repository | workflow | service | subscription | token | delivery | recovery',
    }),
    id: Type.String(),
  }),
  before: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'the changed fields before' })),
  after: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'the changed fields after' })),
});

export const AuditPageSchema = Type.Object({
  entries: Type.Array(AuditEntrySchema),
  nextCursor: NextCursor,
});

const RecoveryStatesSchema = Type.Array(Type.String({ description: 'failed' }));

export const RecoverySchema = Type.Object({
  id: Type.String(),
  connectionId: Type.String(),
  status: Type.Union([Type.Literal('running'), Type.Literal('completed'), Type.Literal('cancelled')]),
  states: RecoveryStatesSchema,
  since: Time,
  until: Type.String({
    format: 'date-time',
    description: 'when the recovery was made: later deliveries are not in it',
  }),
  total: Type.Integer({ description: 'deliveries in the window when the recovery was made' }),
  replayed: Type.Integer(),
  skipped: Type.Integer({
    description: 'already replayed, archive expired, replay limit reached or subscription no longer approved',
  }),
  createdAt: Time,
  finishedAt: NullableTime,
});

export const RecoveryPageSchema = Type.Object({
  recoveries: Type.Array(RecoverySchema),
  nextCursor: NextCursor,
});

export const RecoveryPreviewSchema = Type.Object({
  connectionId: Type.String(),
  states: RecoveryStatesSchema,
  since: Time,
  until: Time,
  total: Type.Integer({ description: 'deliveries of the connection in those states in the window' }),
  toReplay: Type.Integer({ description: 'of them, those not replayed yet: what a recovery would send' }),
});

export type AccountView = Static<typeof AccountSchema>;
export type RepositoryView = Static<typeof RepositorySchema>;
export type WorkflowView = Static<typeof WorkflowSchema>;
export type ServiceView = Static<typeof ServiceSchema>;
export type SchemaVersionView = Static<typeof SchemaVersionSchema>;
export type SchemaViolationView = Static<typeof SchemaViolationSchema>;
export type SubscriptionView = Static<typeof SubscriptionSchema>;
export type DeliveryRecordView = Static<typeof DeliveryRecordSchema>;
export type AttemptView = Static<typeof AttemptSchema>;

/** A problem (RFC 9457) whose `code` is one of `codes`; extensions ride along. */
function problemSchema(codes: ProblemCode[]) {
  const code = Type.Unsafe<ProblemCode>({ type: 'string', enum: codes });
  return Type.Object(
    {
      type: Type.String(),
      title: Type.String(),
      status: Type.Integer(),
      detail: Type.String(),
      code,
    },
    {
      additionalProperties: true,
      description: codes.map((c) => `\`${c}\`: ${PROBLEMS[c].meaning}`).join('; '),
    },
  );
}

/**
 * Problems any route can answer: a request that fails its schema, a client locked out after failed
 * authentications, an outage or a shutdown, a conflict the database broke, a bug.
 */
const ALWAYS: ProblemCode[] = [
  'invalid_request',
  'rate_limited',
  'internal_error',
  'server_unavailable',
  'store_unavailable',
  'store_conflict',
];
/** Problems of a request body, whatever the route (body-budget.ts, json-parser.ts). */
export const BODY_PROBLEMS: ProblemCode[] = [
  'malformed_json',
  'json_too_deep',
  'request_timeout',
  'payload_too_large',
  'unsupported_media_type',
];
/** A path parameter longer than the router takes (routes with parameters). */
export const PATH_PROBLEMS: ProblemCode[] = ['uri_too_long'];
/** Problems of the management API's authentication (authenticate.ts), its rate limit included. */
export const AlertSchema = Type.Object({
  id: Type.String(),
  account: Type.String({ description: 'the account whose members see it (a connection’s consumer)' }),
  kind: Type.String({
    description:
      'connection.warning, connection.critical, connection.recovered, delivery.exhausted, delivery.not_started or service.schema_changed',
  }),
  status: Type.String({
    description: 'pending (to be sent), sent, failed (every retry failed), unsent (no ZEKT_ALERT_URL)',
  }),
  attempts: Type.Integer(),
  lastError: Nullable(
    Type.Unsafe<AlertSendFailure>({
      type: 'string',
      enum: Object.keys(ALERT_SEND_FAILURES),
      description: `why the last send failed, as a category (the receiver's own error is in the operator's log): ${Object.entries(
        ALERT_SEND_FAILURES,
      )
        .map(([category, meaning]) => `${category}: ${meaning}`)
        .join('; ')}`,
    }),
  ),
  createdAt: Time,
  sentAt: NullableTime,
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'the `data` of the JSON body sent' }),
});

export const AlertPageSchema = Type.Object({ alerts: Type.Array(AlertSchema), nextCursor: NextCursor });

export const AUTH_PROBLEMS: ProblemCode[] = ['unauthenticated', 'invalid_token', 'session_expired'];
/** …and of a change made with the console's cookie from another site, which may carry a body. */
export const CHANGE_PROBLEMS: ProblemCode[] = [...AUTH_PROBLEMS, 'csrf_rejected', ...BODY_PROBLEMS];

/**
 * Response schemas for the problems a route can answer, grouped by status (one schema per status,
 * whose `code` is the union of that status's codes).
 *
 * @example response: { 200: DeliveryRecordSchema, ...problems(AUTH_PROBLEMS, 'delivery_not_found') }
 */
export function problems(
  ...codes: Array<ProblemCode | ProblemCode[]>
): Record<number, ReturnType<typeof problemSchema>> {
  const all = [...new Set([...ALWAYS, ...codes.flat()])];
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of all) {
    const status = PROBLEMS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries([...byStatus].map(([status, list]) => [status, problemSchema(list)]));
}
