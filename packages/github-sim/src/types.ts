/**
 * The public record types of the simulator. Every value here is plain JSON (no Dates, Maps or
 * class instances) because the control API returns the same objects over HTTP.
 *
 * Words: an *App* is the simulated GitHub App; an *installation* is that App installed on one
 * account (user or organisation) for some of its repositories; a *hook* is a repository webhook;
 * a *delivery* is one webhook request the simulator sent; a *run* is a scripted workflow run.
 */

/** GitHub's "Simple User" object, as it appears in REST responses and webhook payloads. */
export interface SimpleUser {
  login: string;
  id: number;
  node_id: string;
  avatar_url: string;
  gravatar_id: string;
  url: string;
  html_url: string;
  followers_url: string;
  following_url: string;
  gists_url: string;
  starred_url: string;
  subscriptions_url: string;
  organizations_url: string;
  repos_url: string;
  events_url: string;
  received_events_url: string;
  type: 'User' | 'Organization' | 'Bot';
  user_view_type: 'public';
  site_admin: boolean;
}

/**
 * The signed-in user as `GET /user` returns it to a user access token: GitHub's "Private User"
 * (`user_view_type: 'private'`), with the profile and plan fields.
 */
export interface PrivateUser extends Omit<SimpleUser, 'user_view_type'> {
  user_view_type: 'private';
  name: string | null;
  company: string | null;
  blog: string;
  location: string | null;
  email: string | null;
  hireable: boolean | null;
  bio: string | null;
  twitter_username: string | null;
  public_repos: number;
  public_gists: number;
  followers: number;
  following: number;
  created_at: string;
  updated_at: string;
  private_gists: number;
  total_private_repos: number;
  owned_private_repos: number;
  disk_usage: number;
  collaborators: number;
  two_factor_authentication: boolean;
  plan: { name: string; space: number; collaborators: number; private_repos: number };
}

/** A repository as GitHub returns it from `GET /installation/repositories` and in webhooks. */
export interface Repository {
  id: number;
  node_id: string;
  name: string;
  full_name: string;
  private: boolean;
  owner: SimpleUser;
  html_url: string;
  description: string | null;
  fork: boolean;
  url: string;
  visibility: 'public' | 'private';
  default_branch: string;
  created_at: string;
  updated_at: string;
  pushed_at: string;
  [urlOrFlag: string]: unknown;
}

/** Permission levels an installation can hold, e.g. `{ contents: 'write' }`. */
export type InstallationPermissions = Record<string, 'read' | 'write'>;

/** An installation as returned by `GET /app/installations/{installation_id}`. */
export interface Installation {
  id: number;
  client_id: string;
  account: SimpleUser;
  repository_selection: 'all' | 'selected';
  access_tokens_url: string;
  repositories_url: string;
  html_url: string;
  app_id: number;
  app_slug: string;
  target_id: number;
  target_type: 'User' | 'Organization';
  permissions: InstallationPermissions;
  events: string[];
  created_at: string;
  updated_at: string;
  single_file_name: null;
  has_multiple_single_files: boolean;
  single_file_paths: string[];
  suspended_by: null;
  suspended_at: null;
}

/** A workflow run as `GET /repos/{owner}/{repo}/actions/runs/{run_id}` returns it. */
export interface WorkflowRun {
  id: number;
  name: string;
  node_id: string;
  check_suite_id: number;
  check_suite_node_id: string;
  head_branch: string;
  head_sha: string;
  path: string;
  display_title: string;
  run_number: number;
  run_attempt: number;
  event: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: WorkflowConclusion | null;
  workflow_id: number;
  url: string;
  html_url: string;
  pull_requests: unknown[];
  referenced_workflows: unknown[];
  created_at: string;
  updated_at: string;
  actor: SimpleUser;
  triggering_actor: SimpleUser;
  run_started_at: string;
  jobs_url: string;
  logs_url: string;
  check_suite_url: string;
  artifacts_url: string;
  cancel_url: string;
  rerun_url: string;
  previous_attempt_url: string | null;
  workflow_url: string;
  head_commit: {
    id: string;
    tree_id: string;
    message: string;
    timestamp: string;
    author: { name: string; email: string };
    committer: { name: string; email: string };
  };
  repository: Repository;
  head_repository: Repository;
  head_repository_id: number;
}

export type WorkflowConclusion =
  | 'success'
  | 'failure'
  | 'cancelled'
  | 'timed_out'
  | 'skipped'
  | 'neutral'
  | 'action_required';

/** One webhook request the simulator sent (or tried to send). */
export interface WebhookDeliveryRecord {
  /** GitHub's id of this attempt (`GET …/hooks/{hook_id}/deliveries/{delivery_id}`); each redelivery gets a new one. */
  id: number;
  /** The `X-GitHub-Delivery` GUID; a redelivery reuses it. */
  guid: string;
  event: string;
  action: string | null;
  /** `X-GitHub-Hook-ID`: a repository hook id, or the App's hook id. */
  hookId: number;
  hookType: 'repository' | 'app';
  /** Repository full name for repository hooks, null for the App hook. */
  repository: string | null;
  url: string | null;
  requestHeaders: Record<string, string>;
  payload: unknown;
  /** The HTTP status the receiver answered, null when no response arrived. */
  status: number | null;
  responseBody: string | null;
  durationMs: number;
  /** Why no response arrived (timeout, connection refused, no webhook URL…), else null. */
  error: string | null;
  deliveredAt: string;
  redelivery: boolean;
  /** Set when a webhook drop rule (`dropWebhooks`) failed it: the rule's id. Nothing was sent. */
  droppedBy?: string;
}

/**
 * Fails the matching webhook deliveries without sending them, recorded as GitHub records a
 * delivery its receiver never got: `failed to connect` (or, with `status`, an answer with that
 * status). Omitted filters match everything.
 * @example sim.dropWebhooks({ event: 'workflow_run', repository: 'acme/api', count: 1 })
 */
export interface WebhookDropRule {
  event?: string;
  /** `owner/name`: that repository's hooks only. */
  repository?: string;
  hookType?: 'repository' | 'app';
  /** That hook only (`X-GitHub-Hook-ID`): one of a repository's hooks, or the App's. */
  hookId?: number;
  /** How many deliveries to drop (default 1). */
  count?: number;
  /** Record the drop as this HTTP answer (400–599) instead of a failed connection. */
  status?: number;
}

/** A drop rule with how many deliveries it still drops. */
export interface WebhookDropRuleStatus extends WebhookDropRule {
  id: string;
  remaining: number;
  dropped: number;
}

/** A `repository_dispatch` the simulator accepted with 204. */
export interface DispatchRecord {
  id: number;
  repository: string;
  installationId: number;
  eventType: string;
  clientPayload: Record<string, unknown> | null;
  receivedAt: string;
}

/**
 * A `workflow_dispatch` the simulator accepted (`POST /repos/{o}/{r}/actions/workflows/{file}/dispatches`):
 * 200 with the run's details when `return_run_details` was true, else 204.
 */
export interface WorkflowDispatchRecord {
  id: number;
  repository: string;
  installationId: number;
  /** The workflow's file name, e.g. `on-deploy.yml`. */
  workflow: string;
  ref: string;
  inputs: Record<string, unknown>;
  returnRunDetails: boolean;
  /** The run GitHub created for it. */
  runId: number;
  receivedAt: string;
}

/** Who made a request, as the simulator understood the `Authorization` header. */
export type JournalAuth =
  | { kind: 'none' }
  | { kind: 'app'; appId: number }
  | { kind: 'installation'; installationId: number }
  /** A GitHub App user access token (`ghu_…`) from the OAuth web flow. */
  | { kind: 'user'; login: string }
  | { kind: 'actions-runtime'; runId: number }
  | { kind: 'rejected'; reason: string };

/** One request the simulator answered on `/api/v3`, the OIDC endpoints or `/login/oauth/*`. */
export interface JournalEntry {
  id: number;
  /** When the answer was sent, as GitHub writes times (whole seconds). */
  at: string;
  /**
   * When the request arrived, to the millisecond (ISO 8601): for ordering and spacing calls that
   * fall within one second, which `at` cannot show.
   */
  receivedAt: string;
  method: string;
  /** Path without the query string, e.g. `/api/v3/app/installations/1/access_tokens`. */
  path: string;
  query: Record<string, string>;
  requestId: string;
  requestHeaders: Record<string, string>;
  requestBody: unknown;
  status: number;
  responseBody: unknown;
  auth: JournalAuth;
  durationMs: number;
  /**
   * Set when no HTTP answer was served because an injected fault dropped the connection
   * (`'reset'`, `'hang'`; `status` is then 0), or when the simulator itself failed (a bug): the
   * internal error message.
   */
  error?: string;
  /** Set when an injected fault decided the answer: the rule and the kind of fault served. */
  fault?: { ruleId: string; kind: Fault['kind'] };
}

export interface MessageInput {
  /** Base URL of the Zekt service; the message goes to `<zektUrl>/api/events/receive`. */
  zektUrl: string;
  eventType: string;
  payload: unknown;
  /** OIDC audience; default `api://zekt`. */
  audience?: string;
}

export interface RunWorkflowInput {
  /** `owner/repo` of an installed repository. */
  repository: string;
  /** Workflow file name, e.g. `deploy.yml` (path `.github/workflows/deploy.yml`). */
  workflow: string;
  /** Workflow display name; default: the file name without extension, capitalised. */
  name?: string;
  /** The run's `display_title` (a `run-name`); default: the workflow name. */
  displayTitle?: string;
  conclusion?: WorkflowConclusion;
  actor?: string;
  headBranch?: string;
  headSha?: string;
  event?: string;
  /** The zekt message action's step: sent after the run starts and before it completes. */
  message?: MessageInput;
  /** Also send `workflow_run` `requested` / `in_progress` (default false). */
  send?: { requested?: boolean; inProgress?: boolean };
}

export interface RerunWorkflowInput {
  conclusion?: WorkflowConclusion;
  actor?: string;
  message?: MessageInput;
  send?: { requested?: boolean; inProgress?: boolean };
}

export interface MessageResult {
  /** HTTP status of `POST /api/events/receive`; 0 when no response arrived. */
  status: number;
  body: unknown;
  /** Set when the OIDC token could not be obtained or the request failed. */
  error?: string;
}

export interface RunWorkflowResult {
  run: WorkflowRun;
  /** The environment a step of this run sees (Actions runtime + `GITHUB_*` variables). */
  env: Record<string, string>;
  message: MessageResult | null;
  /** The `workflow_run` deliveries of this run, in the order they were sent. */
  webhooks: WebhookDeliveryRecord[];
}

export interface MintOidcTokenInput {
  repository: string;
  workflow?: string;
  runId?: number;
  runAttempt?: number;
  audience?: string;
  actor?: string;
  ref?: string;
  sha?: string;
  /** Claims to set or replace after the defaults (use to forge tokens in tests). */
  overrides?: Record<string, unknown>;
}

export interface CreateInstallationInput {
  account: { login: string; type?: 'User' | 'Organization' };
  repositories: Array<string | { name: string; private?: boolean }>;
  /** The user who installed the App (the `sender`); default: the account itself, or `<org>-admin` for an organisation. */
  sender?: { login: string };
  /** Default: the App's permissions. */
  permissions?: InstallationPermissions;
  /** The slug of the App to install; default: the App the simulator started with. */
  app?: string;
}

export interface InstallationChange {
  installation: Installation;
  repositories: Repository[];
  delivery: WebhookDeliveryRecord | null;
}

/** The simulated App's credentials and settings. */
export interface SimulatedApp {
  id: number;
  slug: string;
  name: string;
  clientId: string;
  clientSecret: string;
  privateKeyPem: string;
  webhookSecret: string;
  webhookUrl: string | null;
  /** App-level event subscriptions besides installation events. */
  events: string[];
  /** User authorization callback URLs; empty = any http(s) `redirect_uri` is accepted. */
  callbackUrls: string[];
  /** The App hook's id: the `X-GitHub-Hook-ID` of App-level deliveries. */
  hookId: number;
  /** The login of the user or organisation that owns the App. */
  owner: string;
  /** What the App asks of the accounts that install it. */
  permissions: InstallationPermissions;
  /** Whether any account may install it (else only its owner). */
  public: boolean;
  /** Where GitHub sends the browser after an installation; null: nowhere. */
  setupUrl: string | null;
}

/**
 * One failure GitHub can produce, served instead of (or, for `latency`, before) the normal answer.
 * See `FaultRule`.
 */
export type Fault =
  /** Any answer. Without `body`, a 4xx/5xx gets GitHub's basic-error body for the status. */
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  /** Primary rate limit: `x-ratelimit-remaining: 0`, `x-ratelimit-reset` = now + `resetInSeconds` (default 60), status 403 by default. */
  | { kind: 'rate_limit'; status?: 403 | 429; resetInSeconds?: number }
  /** Secondary rate limit: GitHub's message and `retry-after` (default 60 s), status 403 by default. */
  | { kind: 'secondary_rate_limit'; retryAfterSeconds?: number; status?: 403 | 429 }
  /** The status (default 503) with a `Retry-After` header. */
  | { kind: 'retry_after'; status?: 429 | 503; retryAfterSeconds: number }
  /** Waits, then answers normally. */
  | { kind: 'latency'; delayMs: number }
  /** Accepts the request and never answers (until the client gives up or the simulator closes). */
  | { kind: 'hang' }
  /** Destroys the socket with a TCP reset without answering: `ECONNRESET` at the client. */
  | { kind: 'reset' };

/**
 * Which requests get faults. `path` is a REST API path without `/api/v3` in which a `*` segment
 * matches any one segment (`/app/installations/*` matches `/app/installations/42`); literal
 * segments match case-insensitively, like GitHub's owner and repository names. Each matching request consumes the next fault of the first rule
 * (in injection order) that still has faults; a used-up rule stops matching unless `repeat` is
 * true, which starts it over.
 */
export interface FaultRule {
  /** HTTP method, any case; absent = every method. */
  method?: string;
  path: string;
  faults: Fault[];
  repeat?: boolean;
}

/** A rule as `faults()` lists it. */
export interface FaultRuleStatus extends FaultRule {
  id: string;
  /**
   * Faults left before the rule is used up; for a `repeat` rule, faults left in the current
   * cycle (it never reaches 0).
   */
  remaining: number;
  /** How many requests this rule has faulted so far. */
  served: number;
}

/** What a consumer workflow's steps do with Zekt's consumer API. */
export interface ConsumerWorkflowZekt {
  /** Zekt base URL, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** First step: `POST <url>/api/event-delivery/confirm { correlationId, deliveryId }`. */
  confirm?: boolean;
  /** Last step: `POST <url>/api/event-delivery/complete { correlationId, deliveryId, success }`. */
  complete?: boolean;
  /**
   * `oidc` (default): an Actions OIDC token of this consumer run, fetched from the runtime endpoint
   * like `@actions/core`'s `getIDToken()`; `delivery-token`: `client_payload.zekt.token`.
   * Either is sent as `Authorization: Bearer <token>`.
   */
  auth?: 'oidc' | 'delivery-token';
  /** OIDC audience; default `api://zekt`. */
  audience?: string;
  /** When `client_payload.zekt.payloadRef` is present: `GET payloadRef.url` with the same auth. */
  fetchPayload?: boolean;
}

/** One input a `workflow_dispatch` trigger declares (`on.workflow_dispatch.inputs.<name>`). */
export interface WorkflowDispatchInputDefinition {
  description?: string;
  /** A dispatch that leaves out a required input without a default is refused (422). */
  required?: boolean;
  default?: string;
  type?: 'string' | 'boolean' | 'number' | 'choice' | 'environment';
}

/**
 * The triggers of a consumer workflow, as its `on:` says. Only the two a delivery can start are
 * simulated; a trigger left out is absent (a dispatch of that kind does not start the workflow, and
 * a `workflow_dispatch` to it is refused with GitHub's 422).
 */
export interface ConsumerWorkflowTriggers {
  /** `on.repository_dispatch`; `types` absent = every event type. */
  repository_dispatch?: { types?: string[] } | null;
  /** `on.workflow_dispatch`, with the inputs it declares. */
  workflow_dispatch?: { inputs?: Record<string, WorkflowDispatchInputDefinition> } | null;
}

/** A workflow of a consumer repository that reacts to `repository_dispatch` or `workflow_dispatch`. */
export interface ConsumerWorkflowInput {
  /** `owner/repo` of an installed repository. */
  repository: string;
  /** Workflow file name, e.g. `on-deploy.yml`. */
  workflow: string;
  /** Workflow name; default: the file name without extension, capitalised. */
  name?: string;
  /** `on.repository_dispatch.types`; absent = every event type. Not with `on`. */
  types?: string[];
  /**
   * The workflow's triggers; absent = `{ repository_dispatch: { types } }` (the workflow has no
   * `workflow_dispatch` trigger).
   */
  on?: ConsumerWorkflowTriggers;
  /**
   * The `run-name` template, e.g. `zekt ${{ github.event.client_payload.zekt.deliveryId }}`.
   * Supports property paths of the `github` context (`github.event.client_payload.<path>`,
   * `github.event.action`, `github.repository`, `github.run_id`, …); anything else evaluates to ''
   * as on GitHub. Default display title: the workflow name.
   */
  runName?: string;
  /** Default `success`. */
  conclusion?: 'success' | 'failure' | 'cancelled';
  /**
   * The run is deleted once it is in progress (after `durationMs`), instead of completing: no
   * `completed` webhook, and `GET …/actions/runs/{id}` answers 404 from then on.
   */
  deleteRun?: boolean;
  /** Between `requested` and `in_progress`; default 0. */
  startDelayMs?: number;
  /** Between `in_progress` and `completed`; default 0. */
  durationMs?: number;
  /**
   * A `repository_dispatch` is accepted but no run ever starts (no run record is created). A
   * `workflow_dispatch` always creates its run: it stays `queued` (no runner picks it up).
   */
  neverStart?: boolean;
  zekt?: ConsumerWorkflowZekt;
}

/** One HTTP call a consumer run's steps made to Zekt. */
export interface ConsumerCall {
  step: 'confirm' | 'complete' | 'fetch-payload';
  /** HTTP status; 0 when no response arrived (then `error` says why). */
  status: number;
  /** The response body, parsed as JSON when it is JSON. */
  body: unknown;
  error?: string;
}

/** One run of a consumer workflow, started by a `repository_dispatch` or a `workflow_dispatch`. */
export interface ConsumerRunRecord {
  /** The workflow run id (`GET /repos/{owner}/{repo}/actions/runs/{id}` serves it). */
  id: number;
  /** The `defineConsumerWorkflow` id. */
  consumerWorkflowId: string;
  repository: string;
  /** Workflow file name. */
  workflow: string;
  runNumber: number;
  /** What started it: its `event`. */
  trigger: 'repository_dispatch' | 'workflow_dispatch';
  /** The `DispatchRecord` or `WorkflowDispatchRecord` id. */
  dispatchId: number;
  /** The `repository_dispatch` event type; null for a `workflow_dispatch` run. */
  eventType: string | null;
  displayTitle: string;
  /**
   * Moves on once the `workflow_run` deliveries of the new status have been made (the run itself,
   * as the REST API and webhooks show it, changes just before): `completed` means nothing is left
   * to do.
   */
  status: 'queued' | 'in_progress' | 'completed' | 'deleted';
  conclusion: 'success' | 'failure' | 'cancelled' | null;
  startedAt: string | null;
  completedAt: string | null;
  /** `zekt.deliveryId` (of `client_payload`, or of the `zekt` input), or null. */
  deliveryId: string | null;
  /** `zekt.correlationId` as sent (string or number), or null. */
  correlationId: string | number | null;
  calls: ConsumerCall[];
  /** The run's `workflow_run` deliveries, in the order they were sent. */
  webhooks: WebhookDeliveryRecord[];
  /** The body of the `payloadRef` fetch, when `zekt.fetchPayload` fetched one. */
  fetchedPayload?: unknown;
  /** The environment a step of this run sees (Actions runtime + `GITHUB_*`), as `runWorkflow` returns it. */
  env: Record<string, string>;
  /**
   * The `github.event` of the run: GitHub's `repository_dispatch` or `workflow_dispatch` event
   * payload (for `GITHUB_EVENT_PATH`).
   */
  event: Record<string, unknown>;
  /** Set when the run stopped because the simulator failed (a bug): the error message. */
  error?: string;
}
