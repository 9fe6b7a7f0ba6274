import { App } from '@octokit/app';
import { Octokit } from '@octokit/core';
import {
  type DispatchBody,
  type JsonText,
  refusedRunDetails,
  type WorkflowDispatchBody,
  workflowDispatchBody,
} from '../domain/client-payload.js';
import {
  createDispatchRequester,
  DispatchNetworkError,
  type DispatchResponse,
  repositoryPath,
} from './dispatch-request.js';
import { createInstallationTokenCache } from './installation-token-cache.js';

/**
 * Zekt's calls to GitHub, as the App: installation tokens (cached until shortly before they expire
 * and refreshed ahead of time, installation-token-cache.ts), `repository_dispatch`,
 * `workflow_dispatch` and reading a consumer run (dispatch-request.ts), and repository hooks
 * (Octokit).
 *
 * A client serves one GitHub (`apiUrl`, the deployment's GITHUB_API_URL) and remembers, for the
 * life of the process, whether that GitHub refused `return_run_details` (GitHub Enterprise Server
 * 3.20 and older): each process asks once, then dispatches without it. Remembering it in memory
 * costs one refused call per process start; a store row would save that call at the price of a
 * read per dispatch, and an upgraded server would have to be noticed and the row cleared.
 *
 * Octokit's retry and throttling plugins are deliberately absent: the dispatcher owns retries, and
 * records every attempt, which a plugin retrying behind its back would hide.
 */
export interface GitHubClientOptions {
  appId: number;
  privateKey: string;
  /** REST base URL: `https://api.github.com`, or `<simulator>/api/v3`. */
  apiUrl: string;
  userAgent?: string;
}

export interface DispatchInput {
  installationId: number;
  owner: string;
  repo: string;
  /** The body as `buildDispatchBody` serialised it, sent as it is. */
  body: JsonText<DispatchBody>;
  timeoutMs: number;
}

export interface WorkflowDispatchInput {
  installationId: number;
  owner: string;
  repo: string;
  /** The workflow's file name, e.g. `on-deploy.yml`. */
  workflow: string;
  /** The branch or tag; null: the repository's default branch (read from GitHub, then cached). */
  ref: string | null;
  inputs: WorkflowDispatchBody['inputs'];
  timeoutMs: number;
}

/** The run GitHub created for a `workflow_dispatch` (its `workflow-dispatch-response`). */
export interface ConsumerRun {
  id: number;
  /** The run in the REST API (`run_url`). */
  url: string;
  /** The run's page (`html_url`). */
  htmlUrl: string;
}

/** What a read of a consumer run (`GET /repos/{owner}/{repo}/actions/runs/{run_id}`) found. */
export type RunReadResult =
  | {
      outcome: 'found';
      status: string;
      conclusion: string | null;
      headers: Record<string, string>;
      durationMs: number;
    }
  /** 404: the run (or the repository) is gone. */
  | { outcome: 'gone'; headers: Record<string, string>; durationMs: number }
  | {
      outcome: 'failed';
      status?: number;
      headers: Record<string, string>;
      message: string;
      errorCode?: string;
      durationMs: number;
    };

/** How long a repository's default branch, once read, is used without reading it again. */
const DEFAULT_BRANCH_TTL_MS = 10 * 60_000;

/** Response headers kept on attempts and the platform response: enough to explain a failure. */
export const KEPT_RESPONSE_HEADERS = [
  'x-github-request-id',
  'retry-after',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-resource',
  'x-ratelimit-used',
  // On a 403 for a missing permission, the permission the endpoint needs (`actions=write`).
  'x-accepted-github-permissions',
  'date',
] as const;

export type DispatchResult =
  | {
      ok: true;
      status: number;
      headers: Record<string, string>;
      durationMs: number;
      /** The run a `workflow_dispatch` created, when GitHub said (200 with run details). */
      consumerRun?: ConsumerRun;
      /** This call found that GitHub refuses `return_run_details` (asked again without it). */
      runDetailsRefused?: true;
    }
  | {
      ok: false;
      /** Absent when no HTTP response came back (network error, timeout). */
      status?: number;
      headers: Record<string, string>;
      message: string;
      errorCode?: string;
      durationMs: number;
      runDetailsRefused?: true;
    };

export interface RepositoryHookInput {
  installationId: number;
  owner: string;
  repo: string;
  url: string;
  secret: string;
  events: string[];
}

/** GitHub answered an API call with an error; `message` is GitHub's own. */
export class GitHubApiError extends Error {
  override readonly name = 'GitHubApiError';
  constructor(
    readonly status: number | undefined,
    message: string,
    readonly details: string[],
    options?: { cause?: unknown },
    /** The answer's rate-limit headers (`retry-after`, `x-ratelimit-*`), to know how long to wait. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message, options);
  }
}

/** A webhook Zekt can list the deliveries of: a repository hook it placed, or the App's own. */
export type WebhookRef =
  | { kind: 'app' }
  | { kind: 'repository'; installationId: number; owner: string; repo: string; hookId: number };

/** One delivery attempt as GitHub lists it (`GET …/hooks/{hook_id}/deliveries`). */
export interface HookDelivery {
  id: number;
  guid: string;
  deliveredAt: string;
  redelivery: boolean;
  /** 0 when the receiver never answered. */
  statusCode: number;
  /** GitHub's words: `OK`, `Invalid HTTP Response: 503`, `failed to connect`… */
  status: string;
  event: string;
  action: string | null;
}

/** A repository hook as GitHub lists it (its secret is never shown). */
export interface RepositoryHook {
  id: number;
  url: string | null;
  events: string[];
}

/** GitHub answers a hook call within this long, or the call fails (a switch must not hang). */
const HOOK_CALL_TIMEOUT_MS = 10_000;

export interface GitHubClient {
  dispatch(input: DispatchInput): Promise<DispatchResult>;
  /**
   * `POST /repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches` asking for the created run
   * (`return_run_details`), unless this GitHub refused that before; a refusal is answered by asking
   * again without it, once. Without a ref, the repository's default branch is read first (cached).
   */
  dispatchWorkflow(input: WorkflowDispatchInput): Promise<DispatchResult>;
  /** `GET /repos/{owner}/{repo}/actions/runs/{run_id}`: the run's status and conclusion. */
  readWorkflowRun(input: {
    installationId: number;
    owner: string;
    repo: string;
    runId: number;
    timeoutMs: number;
  }): Promise<RunReadResult>;
  createRepositoryHook(input: RepositoryHookInput): Promise<{ hookId: number }>;
  listRepositoryHooks(input: {
    installationId: number;
    owner: string;
    repo: string;
  }): Promise<RepositoryHook[]>;
  /** Replaces a hook's URL, secret and events (GitHub keeps no part of the old configuration). */
  updateRepositoryHook(input: RepositoryHookInput & { hookId: number }): Promise<void>;
  deleteRepositoryHook(input: {
    installationId: number;
    owner: string;
    repo: string;
    hookId: number;
  }): Promise<void>;
  /**
   * Where people install the App on an account (`<html_url>/installations/new`, from `GET /app`),
   * or null when GitHub cannot be asked. Read once, then remembered.
   */
  appInstallUrl(): Promise<string | null>;
  /** One page of a webhook's recent deliveries, newest first; `nextCursor` null on the last page. */
  listHookDeliveries(
    hook: WebhookRef,
    cursor: string | null,
  ): Promise<{ deliveries: HookDelivery[]; nextCursor: string | null }>;
  /** Asks GitHub to send a delivery again (same GUID and body); GitHub answers 202 and sends later. */
  redeliverHookDelivery(hook: WebhookRef, deliveryId: number): Promise<void>;
}

export function createGitHubClient(options: GitHubClientOptions): GitHubClient {
  const app = new App({
    appId: options.appId,
    privateKey: options.privateKey,
    Octokit: Octokit.defaults({
      baseUrl: options.apiUrl.replace(/\/$/, ''),
      userAgent: options.userAgent ?? 'zekt',
    }),
  });

  let installUrl: Promise<string | null> | undefined;
  const userAgent = options.userAgent ?? 'zekt';
  const tokens = createInstallationTokenCache({
    fetchToken: async (installationId) => {
      const response = await app.octokit.request('POST /app/installations/{installation_id}/access_tokens', {
        installation_id: installationId,
        request: { signal: AbortSignal.timeout(HOOK_CALL_TIMEOUT_MS) },
      });
      return { token: response.data.token, expiresAt: Date.parse(response.data.expires_at) };
    },
  });
  const dispatcher = createDispatchRequester({ apiUrl: options.apiUrl, userAgent });
  /** Whether this GitHub refused `return_run_details` (GHES ≤ 3.20); see the comment above. */
  let runDetailsRefused = false;
  const defaultBranches = new Map<string, { branch: string; until: number }>();

  type Sent =
    | { response: DispatchResponse; headers: Record<string, string> }
    | { failure: FailureDescription };

  /** One call with the installation's token; a 401 makes the next call fetch a new token. */
  async function send(
    installationId: number,
    request: Omit<Parameters<typeof dispatcher.request>[0], 'token'>,
  ): Promise<Sent> {
    let token: string;
    try {
      token = await tokens.get(installationId);
    } catch (error) {
      return { failure: describeFailure(error) };
    }
    try {
      const response = await dispatcher.request({ ...request, token });
      if (response.status === 401) tokens.forget(installationId, token);
      return { response, headers: keepHeaders(response.headers) };
    } catch (error) {
      const code = error instanceof DispatchNetworkError ? error.code : findErrorCode(error);
      return {
        failure: {
          headers: {},
          message: describeCause(error),
          ...(code === undefined ? {} : { errorCode: code }),
        },
      };
    }
  }

  /** GitHub's answer as a failure: its status, kept headers and message. */
  function answered(sent: Extract<Sent, { response: DispatchResponse }>): FailureDescription {
    return {
      status: sent.response.status,
      headers: sent.headers,
      message: githubMessage(parseJson(sent.response.body)) ?? `HTTP ${sent.response.status}`,
    };
  }

  const ok = (status: number) => status >= 200 && status < 300;

  async function defaultBranch(
    input: WorkflowDispatchInput,
  ): Promise<{ branch: string } | { failure: FailureDescription }> {
    const key = `${input.installationId}:${input.owner}/${input.repo}`.toLowerCase();
    const cached = defaultBranches.get(key);
    if (cached && cached.until > Date.now()) return { branch: cached.branch };
    const sent = await send(input.installationId, {
      method: 'GET',
      path: repositoryPath(input.owner, input.repo),
      timeoutMs: input.timeoutMs,
    });
    if ('failure' in sent) return sent;
    const failure = answered(sent);
    if (!ok(sent.response.status)) {
      return {
        failure: {
          ...failure,
          message: `reading the default branch of ${input.owner}/${input.repo}: ${failure.message}`,
        },
      };
    }
    const branch = (parseJson(sent.response.body) as { default_branch?: unknown } | null)?.default_branch;
    if (typeof branch !== 'string' || branch === '') {
      return {
        failure: { ...failure, message: `GitHub named no default branch for ${input.owner}/${input.repo}` },
      };
    }
    defaultBranches.set(key, { branch, until: Date.now() + DEFAULT_BRANCH_TTL_MS });
    return { branch };
  }

  return {
    appInstallUrl() {
      installUrl ??= app.octokit
        .request('GET /app')
        .then((response) => (response.data ? `${response.data.html_url}/installations/new` : null))
        .catch(() => {
          // Ask again next time: GitHub may be back.
          installUrl = undefined;
          return null;
        });
      return installUrl;
    },

    async dispatch(input) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let token: string;
      try {
        token = await tokens.get(input.installationId);
      } catch (error) {
        return { ok: false, ...describeFailure(error), durationMs: elapsed() };
      }
      try {
        const response = await dispatcher.post({
          token,
          owner: input.owner,
          repo: input.repo,
          body: input.body,
          timeoutMs: input.timeoutMs,
        });
        const headers = keepHeaders(response.headers);
        if (response.status >= 200 && response.status < 300) {
          return { ok: true, status: response.status, headers, durationMs: elapsed() };
        }
        // A revoked or expired token: fetch a new one for the next attempt.
        if (response.status === 401) tokens.forget(input.installationId, token);
        return {
          ok: false,
          status: response.status,
          headers,
          message: githubMessage(parseJson(response.body)) ?? `HTTP ${response.status}`,
          durationMs: elapsed(),
        };
      } catch (error) {
        const code = error instanceof DispatchNetworkError ? error.code : findErrorCode(error);
        return {
          ok: false,
          headers: {},
          message: describeCause(error),
          ...(code === undefined ? {} : { errorCode: code }),
          durationMs: elapsed(),
        };
      }
    },

    async dispatchWorkflow(input) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let ref = input.ref;
      if (ref === null) {
        const read = await defaultBranch(input);
        if ('failure' in read) return { ok: false, ...read.failure, durationMs: elapsed() };
        ref = read.branch;
      }
      const path = `${repositoryPath(input.owner, input.repo)}/actions/workflows/${encodeURIComponent(input.workflow)}/dispatches`;
      const post = (details: boolean) =>
        send(input.installationId, {
          method: 'POST',
          path,
          body: workflowDispatchBody(ref as string, input.inputs, details),
          timeoutMs: input.timeoutMs,
        });
      const askedDetails = !runDetailsRefused;
      let sent = await post(askedDetails);
      let fellBack = false;
      if (askedDetails && 'response' in sent && refusedRunDetails(answered(sent))) {
        runDetailsRefused = true;
        fellBack = true;
        sent = await post(false);
      }
      const refused = fellBack ? { runDetailsRefused: true as const } : {};
      if ('failure' in sent) return { ok: false, ...sent.failure, ...refused, durationMs: elapsed() };
      if (!ok(sent.response.status))
        return { ok: false, ...answered(sent), ...refused, durationMs: elapsed() };
      const consumerRun =
        sent.response.status === 200 ? consumerRunOf(parseJson(sent.response.body)) : undefined;
      return {
        ok: true,
        status: sent.response.status,
        headers: sent.headers,
        durationMs: elapsed(),
        ...(consumerRun === undefined ? {} : { consumerRun }),
        ...refused,
      };
    },

    async readWorkflowRun(input) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const sent = await send(input.installationId, {
        method: 'GET',
        path: `${repositoryPath(input.owner, input.repo)}/actions/runs/${input.runId}`,
        timeoutMs: input.timeoutMs,
      });
      if ('failure' in sent) return { outcome: 'failed', ...sent.failure, durationMs: elapsed() };
      if (sent.response.status === 404)
        return { outcome: 'gone', headers: sent.headers, durationMs: elapsed() };
      if (!ok(sent.response.status)) return { outcome: 'failed', ...answered(sent), durationMs: elapsed() };
      const run = parseJson(sent.response.body) as { status?: unknown; conclusion?: unknown } | null;
      if (typeof run?.status !== 'string') {
        return {
          outcome: 'failed',
          ...answered(sent),
          message: 'GitHub answered a run without a status',
          durationMs: elapsed(),
        };
      }
      return {
        outcome: 'found',
        status: run.status,
        conclusion: typeof run.conclusion === 'string' ? run.conclusion : null,
        headers: sent.headers,
        durationMs: elapsed(),
      };
    },

    async listHookDeliveries(hook, cursor) {
      const request = {
        per_page: 100,
        ...(cursor === null ? {} : { cursor }),
        request: { signal: AbortSignal.timeout(HOOK_CALL_TIMEOUT_MS) },
      };
      try {
        const response =
          hook.kind === 'app'
            ? await app.octokit.request('GET /app/hook/deliveries', request)
            : await (await app.getInstallationOctokit(hook.installationId)).request(
                'GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries',
                { owner: hook.owner, repo: hook.repo, hook_id: hook.hookId, ...request },
              );
        return {
          deliveries: response.data.map((d) => ({
            id: Number(d.id),
            guid: d.guid,
            deliveredAt: d.delivered_at,
            redelivery: d.redelivery,
            statusCode: d.status_code,
            status: d.status,
            event: d.event,
            action: d.action ?? null,
          })),
          nextCursor: nextCursorOf(response.headers.link),
        };
      } catch (error) {
        throw toApiError(error, `listing the deliveries of ${describeHook(hook)}`);
      }
    },

    async redeliverHookDelivery(hook, deliveryId) {
      const request = {
        delivery_id: deliveryId,
        request: { signal: AbortSignal.timeout(HOOK_CALL_TIMEOUT_MS) },
      };
      try {
        if (hook.kind === 'app') {
          await app.octokit.request('POST /app/hook/deliveries/{delivery_id}/attempts', request);
        } else {
          const octokit = await app.getInstallationOctokit(hook.installationId);
          await octokit.request(
            'POST /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts',
            {
              owner: hook.owner,
              repo: hook.repo,
              hook_id: hook.hookId,
              ...request,
            },
          );
        }
      } catch (error) {
        throw toApiError(error, `redelivering delivery ${deliveryId} of ${describeHook(hook)}`);
      }
    },

    async createRepositoryHook(input) {
      try {
        const octokit = await app.getInstallationOctokit(input.installationId);
        const response = await octokit.request('POST /repos/{owner}/{repo}/hooks', {
          owner: input.owner,
          repo: input.repo,
          name: 'web',
          active: true,
          events: input.events,
          config: { url: input.url, content_type: 'json', secret: input.secret, insecure_ssl: '0' },
          request: { signal: AbortSignal.timeout(HOOK_CALL_TIMEOUT_MS) },
        });
        return { hookId: response.data.id };
      } catch (error) {
        throw toApiError(error, `placing a webhook in ${input.owner}/${input.repo}`);
      }
    },

    async listRepositoryHooks(input) {
      try {
        const octokit = await app.getInstallationOctokit(input.installationId);
        const response = await octokit.request('GET /repos/{owner}/{repo}/hooks', {
          owner: input.owner,
          repo: input.repo,
          per_page: 100,
          request: { signal: AbortSignal.timeout(HOOK_CALL_TIMEOUT_MS) },
        });
        return response.data.map((hook) => ({
          id: hook.id,
          url: typeof hook.config?.url === 'string' ? hook.config.url : null,
          events: hook.events,
        }));
      } catch (error) {
        throw toApiError(error, `listing the webhooks of ${input.owner}/${input.repo}`);
      }
    },

    async updateRepositoryHook(input) {
      try {
        const octokit = await app.getInstallationOctokit(input.installationId);
        await octokit.request('PATCH /repos/{owner}/{repo}/hooks/{hook_id}', {
          owner: input.owner,
          repo: input.repo,
          hook_id: input.hookId,
          active: true,
          events: input.events,
          config: { url: input.url, content_type: 'json', secret: input.secret, insecure_ssl: '0' },
          request: { signal: AbortSignal.timeout(HOOK_CALL_TIMEOUT_MS) },
        });
      } catch (error) {
        throw toApiError(error, `updating the webhook of ${input.owner}/${input.repo}`);
      }
    },

    async deleteRepositoryHook(input) {
      try {
        const octokit = await app.getInstallationOctokit(input.installationId);
        await octokit.request('DELETE /repos/{owner}/{repo}/hooks/{hook_id}', {
          owner: input.owner,
          repo: input.repo,
          hook_id: input.hookId,
          request: { signal: AbortSignal.timeout(HOOK_CALL_TIMEOUT_MS) },
        });
      } catch (error) {
        // The hook (or the repository) is already gone: that is what we wanted.
        if (statusOf(error) === 404) return;
        throw toApiError(error, `removing the webhook from ${input.owner}/${input.repo}`);
      }
    },
  };
}

/** The run of a 200 `workflow-dispatch-response`, or undefined when the body is not one. */
function consumerRunOf(body: unknown): ConsumerRun | undefined {
  const details = body as { workflow_run_id?: unknown; run_url?: unknown; html_url?: unknown } | null;
  if (
    typeof details?.workflow_run_id !== 'number' ||
    !Number.isSafeInteger(details.workflow_run_id) ||
    typeof details.run_url !== 'string' ||
    typeof details.html_url !== 'string'
  ) {
    return undefined;
  }
  return { id: details.workflow_run_id, url: details.run_url, htmlUrl: details.html_url };
}

function describeHook(hook: WebhookRef): string {
  return hook.kind === 'app' ? 'the App webhook' : `webhook ${hook.hookId} of ${hook.owner}/${hook.repo}`;
}

/** The `cursor` of the `rel="next"` link GitHub's cursor pagination answers with, if any. */
function nextCursorOf(link: string | undefined): string | null {
  const next = link?.split(',').find((part) => /rel="next"/.test(part));
  const url = next === undefined ? undefined : /<([^>]+)>/.exec(next)?.[1];
  return url === undefined ? null : new URL(url).searchParams.get('cursor');
}

function keepHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_RESPONSE_HEADERS) {
    const value = headers?.[name];
    if (value !== undefined && value !== null) kept[name] = String(value);
  }
  return kept;
}

function statusOf(error: unknown): number | undefined {
  const response = (error as { response?: { status?: unknown } } | null)?.response;
  return typeof response?.status === 'number' ? response.status : undefined;
}

interface FailureDescription {
  status?: number;
  headers: Record<string, string>;
  message: string;
  errorCode?: string;
}

/**
 * Octokit turns every failure into a `RequestError` with status 500, including network errors
 * and timeouts that never reached GitHub; only errors with a `response` are GitHub's answers. The
 * cause chain tells the rest apart.
 */
export function describeFailure(error: unknown): FailureDescription {
  const response = (
    error as { response?: { status?: number; headers?: Record<string, unknown>; data?: unknown } }
  )?.response;
  if (response && typeof response.status === 'number') {
    return {
      status: response.status,
      headers: keepHeaders(response.headers),
      message: githubMessage(response.data) ?? (error as Error).message,
    };
  }
  const code = findErrorCode(error);
  return {
    headers: {},
    message: describeCause(error),
    ...(code === undefined ? {} : { errorCode: code }),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function githubMessage(data: unknown): string | undefined {
  if (
    typeof data === 'object' &&
    data !== null &&
    typeof (data as { message?: unknown }).message === 'string'
  ) {
    const body = data as { message: string; errors?: Array<{ message?: string } | string> };
    const details = (body.errors ?? [])
      .map((e) => (typeof e === 'string' ? e : e.message))
      .filter((m): m is string => typeof m === 'string');
    return details.length > 0 ? `${body.message}: ${details.join('; ')}` : body.message;
  }
  return typeof data === 'string' && data.length > 0 ? data.slice(0, 500) : undefined;
}

function* causes(error: unknown): Generator<unknown> {
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

function findErrorCode(error: unknown): string | undefined {
  for (const cause of causes(error)) {
    const name = (cause as { name?: unknown }).name;
    if (name === 'TimeoutError' || name === 'AbortError') return 'TIMEOUT';
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0) return code;
  }
  return undefined;
}

function describeCause(error: unknown): string {
  const messages: string[] = [];
  for (const cause of causes(error)) {
    const message = (cause as { message?: unknown }).message;
    if (typeof message === 'string' && message.length > 0 && !messages.includes(message))
      messages.push(message);
  }
  return messages.join(': ') || 'the request to GitHub failed';
}

function toApiError(error: unknown, doing: string): GitHubApiError {
  const failure = describeFailure(error);
  const details = ((error as { response?: { data?: { errors?: unknown[] } } })?.response?.data?.errors ?? [])
    .map((e) => (typeof e === 'string' ? e : (e as { message?: string })?.message))
    .filter((m): m is string => typeof m === 'string');
  return new GitHubApiError(
    failure.status,
    `GitHub refused ${doing}: ${failure.message}`,
    details,
    { cause: error },
    failure.headers,
  );
}
