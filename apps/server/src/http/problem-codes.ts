/**
 * Every problem Zekt answers with, in one table: the stable `code` clients branch on, its HTTP
 * status, its RFC 9457 `title`, and what it means for the caller. The error handler, the response
 * schemas of every route (and so docs/openapi.json), and the error table of docs/api.md are all
 * made from this table; a test keeps docs/api.md in step with it.
 */
export const PROBLEMS = {
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    meaning: 'the body, query or path does not match the endpoint’s schema; `detail` names the field',
  },
  malformed_json: { status: 400, title: 'Malformed JSON', meaning: 'the body is not JSON (or is empty)' },
  json_too_deep: {
    status: 400,
    title: 'JSON nested too deeply',
    meaning:
      'a JSON document (body, webhook, or a message payload held in a string) nests arrays and objects deeper than `ZEKT_MAX_JSON_DEPTH` levels (default 64); flatten it',
  },
  malformed_webhook: {
    status: 400,
    title: 'Malformed webhook',
    meaning: 'a signed webhook whose payload lacks what its event must carry',
  },
  invalid_event_type: {
    status: 400,
    title: 'Invalid event type',
    meaning:
      'event types are 1–100 characters of letters, digits, `.`, `_`, `:` and `-` (GitHub’s `repository_dispatch` limit is 100)',
  },
  invalid_payload: {
    status: 400,
    title: 'Invalid payload',
    meaning: 'a message’s `payload` must be a JSON value, or a string holding JSON',
  },
  invalid_slug: {
    status: 400,
    title: 'Invalid slug',
    meaning: 'service slugs are 1–63 lower-case letters, digits and dashes, starting with a letter or digit',
  },
  invalid_workflow_file: {
    status: 400,
    title: 'Invalid workflow file',
    meaning: 'give the workflow’s file name, e.g. `deploy.yml`',
  },
  invalid_ref: {
    status: 400,
    title: 'Invalid ref',
    meaning:
      'a `workflow_dispatch` ref is a branch or tag name (`main`, `release/v2`, `refs/tags/v1`) by git’s rules for ref names, or null for the repository’s default branch',
  },
  invalid_oauth_state: {
    status: 400,
    title: 'Invalid login state',
    meaning:
      'the login’s callback does not carry the `state` this browser was given (started elsewhere, or older than 10 minutes): start again at `/auth/login`',
  },
  invalid_setup_state: {
    status: 400,
    title: 'Invalid setup state',
    meaning:
      'GitHub sent the browser back from registering the App with a `state` this browser was not given, one used already, or one older than an hour; nothing was registered: start again on the setup page',
  },
  invalid_recovery_window: {
    status: 400,
    title: 'Invalid recovery window',
    meaning:
      'a recovery’s `since` must be an ISO 8601 time in the past, at most 90 days ago (archived payloads are kept 90 days)',
  },
  invalid_expiry: {
    status: 400,
    title: 'Invalid expiry',
    meaning: 'an API token’s `expiresAt` must be an ISO 8601 time in the future, at most 366 days ahead',
  },
  invalid_cursor: { status: 400, title: 'Invalid cursor', meaning: 'pass back `nextCursor` unchanged' },
  invalid_schema: {
    status: 400,
    title: 'Invalid schema',
    meaning:
      'a service’s message schema must be JSON Schema draft 2020-12 that compiles, with local `$ref`s only (never fetched) and patterns RE2 can run; `pointer` is the JSON Pointer of the problem in the schema',
  },
  invalid_example: {
    status: 400,
    title: 'Invalid example',
    meaning:
      'the example message does not match the schema it is saved with; `errors` lists `{ pointer, message }`',
  },
  invalid_month: { status: 400, title: 'Invalid month', meaning: 'months are `YYYY-MM`' },
  unauthenticated: {
    status: 401,
    title: 'Authentication required',
    meaning: 'send an API token (`Authorization: Bearer zkt_…`) or log in to the console',
  },
  invalid_token: {
    status: 401,
    title: 'Invalid token',
    meaning:
      'the token is unknown, revoked, expired, for another audience or issuer, or badly signed (`alg: none` included)',
  },
  session_expired: {
    status: 401,
    title: 'Session expired',
    meaning: 'the console session ended (logout, 12 hours, or unknown): log in again',
  },
  oauth_denied: { status: 401, title: 'Login declined', meaning: 'the user declined the login on GitHub' },
  oauth_failed: {
    status: 401,
    title: 'Login failed',
    meaning:
      'GitHub refused the login’s code or the App’s OAuth credentials; `detail` carries GitHub’s reason',
  },
  invalid_signature: {
    status: 401,
    title: 'Invalid signature',
    meaning: 'the webhook’s `X-Hub-Signature-256` does not match the hook’s secret; nothing was stored',
  },
  repository_mismatch: {
    status: 403,
    title: 'Repository mismatch',
    meaning: 'the message body names another repository or run than the OIDC token proves',
  },
  hook_repository_mismatch: {
    status: 403,
    title: 'Hook repository mismatch',
    meaning: 'a repository hook’s event is about another repository than the hook’s',
  },
  csrf_rejected: {
    status: 403,
    title: 'Cross-site request rejected',
    meaning:
      'a change authenticated by the session cookie came without the console’s `Origin`; scripts use an API token',
  },
  membership_required: {
    status: 403,
    title: 'Membership required',
    meaning:
      'only members of an account see this: install the Zekt GitHub App on an account, or ask one of its members, then log in again',
  },
  invalid_setup_code: {
    status: 403,
    title: 'Invalid setup code',
    meaning:
      'the setup code is wrong: open the URL `zekt serve` printed at start (`zekt setup` prints it again)',
  },
  setup_session_required: {
    status: 403,
    title: 'Setup code required',
    meaning:
      'registering the GitHub App needs a browser that opened the setup URL with its code (a setup session lasts 2 hours): open the URL `zekt serve` or `zekt setup` printed',
  },
  route_not_found: { status: 404, title: 'Route not found', meaning: 'no such endpoint' },
  console_not_built: {
    status: 404,
    title: 'Console not built',
    meaning: 'the console’s files are missing: run `npm run build`',
  },
  account_not_found: {
    status: 404,
    title: 'Account not found',
    meaning: 'no account of that login that you are a member of',
  },
  repository_not_found: {
    status: 404,
    title: 'Repository not found',
    meaning: 'no repository of that name in your accounts’ installations',
  },
  repository_not_enabled: {
    status: 404,
    title: 'Repository not enabled',
    meaning: 'the message’s repository is not an enabled provider: enable it first',
  },
  service_not_found: { status: 404, title: 'Service not found', meaning: 'no such service in your accounts' },
  schema_not_found: {
    status: 404,
    title: 'Schema not found',
    meaning: 'the service has no message schema, or no version of that number',
  },
  subscription_not_found: {
    status: 404,
    title: 'Subscription not found',
    meaning: 'no such subscription that you are a party to',
  },
  connection_not_found: {
    status: 404,
    title: 'Connection not found',
    meaning: 'no such connection that you are a party to',
  },
  recovery_not_found: {
    status: 404,
    title: 'Recovery not found',
    meaning: 'no such bulk recovery of a connection you are a party to',
  },
  token_not_found: {
    status: 404,
    title: 'Token not found',
    meaning: 'no unrevoked API token with that id of yours',
  },
  delivery_not_found: {
    status: 404,
    title: 'Delivery not found',
    meaning: 'no delivery with that id / correlation id for the calling repository or your connections',
  },
  payload_not_found: {
    status: 404,
    title: 'No payload',
    meaning: 'the delivery carried no message, only the completion event; there is nothing to fetch',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    meaning:
      'the request (headers and body) did not arrive within `ZEKT_REQUEST_TIMEOUT_MS`; send it again, at once',
  },
  already_final: {
    status: 409,
    title: 'Delivery already final',
    meaning: 'the delivery is Completed or Failed already; the current record is in the answer (`record`)',
  },
  run_already_routed: {
    status: 409,
    title: 'Run already routed',
    meaning:
      'the run completed and was routed before this message arrived; send the message before the run ends (or set `ZEKT_MESSAGE_GRACE_MS`)',
  },
  invalid_transition: {
    status: 409,
    title: 'Invalid transition',
    meaning: 'the subscription’s status does not allow that decision; `statusCurrent` is its status',
  },
  recovery_running: {
    status: 409,
    title: 'Recovery running',
    meaning:
      'the connection already has a bulk recovery running (`recoveryId`), or another request started one at the same moment: wait for it or cancel it, so no delivery is replayed by two',
  },
  replay_conflict: {
    status: 409,
    title: 'Replayed meanwhile',
    meaning:
      'another replay of the delivery (`replayId`: a single replay, or a bulk recovery’s) was made while this one was being made, so nothing was created: the delivery is sent once, not twice. Ask again to send it once more',
  },
  recovery_finished: {
    status: 409,
    title: 'Recovery finished',
    meaning: 'the bulk recovery has completed or was cancelled already; `statusCurrent` is its status',
  },
  subscription_inactive: {
    status: 409,
    title: 'Subscription inactive',
    meaning:
      'the delivery’s subscription is no longer approved (revoked, withdrawn or denied): nothing is sent to its repository any more; `statusCurrent` is its status',
  },
  subscription_exists: {
    status: 409,
    title: 'Subscription exists',
    meaning: 'that repository already has a requested or approved subscription to the service',
  },
  slug_taken: { status: 409, title: 'Slug taken', meaning: 'another service of the account has that slug' },
  provider_not_enabled: {
    status: 409,
    title: 'Provider not enabled',
    meaning: 'enable the repository as a provider before creating a service',
  },
  workflow_not_whitelisted: {
    status: 409,
    title: 'Workflow not whitelisted',
    meaning: 'whitelist the workflow before creating a service from it',
  },
  completion_tracking_disabled: {
    status: 409,
    title: 'Completion tracking is off',
    meaning:
      'turn on completion tracking (COMPLETION) for the consumer repository before Durable Delivery, or deliver by `workflow_dispatch` (Zekt then follows the run itself)',
  },
  installation_unavailable: {
    status: 409,
    title: 'Installation unavailable',
    meaning: 'the App is not installed on the account, or the installation is suspended',
  },
  app_already_configured: {
    status: 409,
    title: 'App already configured',
    meaning:
      'a GitHub App is configured (in the environment, or registered through setup): setup is closed; to use another App, set its GITHUB_APP_ID, GITHUB_PRIVATE_KEY and GITHUB_WEBHOOK_SECRET',
  },
  limit_reached: {
    status: 409,
    title: 'Limit reached',
    meaning:
      'the account has as many services, workflows or pending subscription requests as a deployment allows (`limit`, set by `ZEKT_MAX_*_PER_ACCOUNT`): remove some first, or ask the operator',
  },
  breaking_schema_change: {
    status: 409,
    title: 'Breaking schema change',
    meaning:
      'the new version removes or narrows what the one in force accepted (`compatibility` lists how): send `acceptBreaking: true` to save it anyway; subscribers are alerted',
  },
  archive_expired: {
    status: 410,
    title: 'Archive expired',
    meaning: 'the archived payload is past its 90 days; it cannot be replayed or fetched',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    meaning:
      'a message is at most 512 KB, a webhook 25 MB (GitHub’s cap), any other request body 1 MB; refused from `Content-Length` before the body is read when it says so',
  },
  schema_too_large: {
    status: 413,
    title: 'Schema too large',
    meaning: 'a message schema is at most 64 KB serialized, and so is its example',
  },
  uri_too_long: {
    status: 414,
    title: 'URI too long',
    meaning: 'a path parameter is longer than 100 characters: no name or id Zekt knows is that long',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    meaning: 'send JSON (`application/json`); webhooks must be configured with content type JSON',
  },
  payload_schema_violation: {
    status: 422,
    title: 'Message does not match the schema',
    meaning:
      'an enforced schema of the workflow’s service refused the message; nothing was stored. `errors` lists up to 20 `{ pointer, message }`, `errorCount` all of them',
  },
  schema_validation_timeout: {
    status: 422,
    title: 'Message could not be checked',
    meaning:
      'checking the message against an enforced schema passed its time bound (`ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS`) and was stopped; nothing was stored: simplify the schema',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    meaning:
      'too many failed authentications from this client or with this token prefix, or too many calls with this token, in the last minute: wait `Retry-After` seconds',
  },
  replay_limit_reached: {
    status: 429,
    title: 'Replay limit reached',
    meaning: 'a delivery is replayed at most 10 times an hour: wait `Retry-After` seconds',
  },
  headers_too_large: {
    status: 431,
    title: 'Request headers too large',
    meaning: 'the request’s headers are larger than 16 KB',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    meaning: 'a bug: it has been logged with its stack; the answer reveals nothing',
  },
  github_rejected: {
    status: 502,
    title: 'GitHub rejected the call',
    meaning: 'GitHub refused the call (placing a webhook); `detail` carries GitHub’s message',
  },
  github_unavailable: {
    status: 502,
    title: 'GitHub unavailable',
    meaning: 'GitHub did not answer; try again',
  },
  manifest_code_rejected: {
    status: 502,
    title: 'GitHub refused the App’s code',
    meaning:
      'GitHub did not hand over the registered App’s credentials (`POST /app-manifests/{code}/conversions`: the code is unknown, used or older than an hour); delete the App it may have created in its settings on GitHub and register again on the setup page',
  },
  oidc_unavailable: {
    status: 503,
    title: 'OIDC issuer unavailable',
    meaning: 'the OIDC issuer’s keys could not be fetched; try again shortly',
  },
  oauth_not_configured: {
    status: 503,
    title: 'Login not configured',
    meaning: 'console login needs `GITHUB_CLIENT_ID` and `GITHUB_CLIENT_SECRET`',
  },
  not_ready: {
    status: 503,
    title: 'Not ready',
    meaning:
      '`/readyz` only: the process cannot work as configured (GitHub refused the App’s key or id at start); `detail` names the setting to fix',
  },
  setup_required: {
    status: 503,
    title: 'Setup required',
    meaning:
      'no GitHub App is configured yet (setup mode): webhooks cannot be verified and GitHub cannot be called; register the App at `<ZEKT_BASE_URL>/setup` with the setup code `zekt serve` printed',
  },
  store_unavailable: {
    status: 503,
    title: 'Store unavailable',
    meaning: 'the database is unreachable; nothing was acknowledged; try again shortly',
  },
  store_conflict: {
    status: 503,
    title: 'Store conflict',
    meaning:
      'the database ended the request’s transaction to resolve a conflict with a concurrent one; nothing was stored: send it again after `Retry-After` seconds',
  },
  server_unavailable: {
    status: 503,
    title: 'Server unavailable',
    meaning:
      'this endpoint already holds as many request bytes as `ZEKT_BODY_BYTES_IN_FLIGHT` allows, or the server is shutting down; nothing was done: retry after `Retry-After` seconds',
  },
} as const satisfies Record<string, { status: number; title: string; meaning: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

export const PROBLEM_CODES = Object.keys(PROBLEMS) as ProblemCode[];

/** The codes answered with `status`. */
export type ProblemCodeOf<S extends number> = {
  [C in ProblemCode]: (typeof PROBLEMS)[C]['status'] extends S ? C : never;
}[ProblemCode];

export function isProblemCode(value: string): value is ProblemCode {
  return Object.hasOwn(PROBLEMS, value);
}

/** docs/api.md's table of problems (a test checks the committed page contains it). */
export function problemTable(): string {
  const rows = PROBLEM_CODES.map((code) => {
    const problem = PROBLEMS[code];
    return `| ${problem.status} | \`${code}\` | ${problem.title} | ${problem.meaning} |`;
  });
  return ['| status | code | title | meaning — and what to do |', '|---|---|---|---|', ...rows].join('\n');
}
