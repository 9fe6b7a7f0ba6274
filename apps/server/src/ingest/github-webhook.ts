import type { Logger } from 'pino';
import { JsonTooDeepError, parseBoundedJson } from '../domain/bounded-json.js';
import type { Clock } from '../domain/clock.js';
import { findSigningSecret } from '../github/webhook-signature.js';
import type { SecretBox } from '../security/secret-box.js';
import { completeHookPlacement, findHooksBeingPlaced } from '../store/hooks.js';
import type { RepositoryHookRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { storeCompletionEvent } from './completion-event.js';
import { trackConsumerRun } from './completion-tracking.js';
import type { HookSecrets } from './hook-secrets.js';
import { applyInstallationEvent } from './installation-events.js';

/**
 * `POST /webhooks/github`: verify, classify, store — then answer. Nothing here calls GitHub or
 * routes; the stored event is picked up by the router after the commit (docs/architecture.md).
 */
export interface WebhookRequest {
  event: string | undefined;
  deliveryGuid: string | undefined;
  hookId: string | undefined;
  targetType: string | undefined;
  targetId: string | undefined;
  signature256: string | undefined;
  contentType: string | undefined;
  rawBody: Buffer;
}

export type WebhookOutcome =
  | { outcome: 'unauthorized'; detail: string }
  | { outcome: 'unsupported'; detail: string }
  | { outcome: 'malformed'; detail: string }
  | { outcome: 'too_deep'; detail: string }
  | { outcome: 'forbidden'; detail: string }
  | { outcome: 'duplicate'; detail: string }
  | { outcome: 'ignored'; detail: string }
  | { outcome: 'pong' }
  | { outcome: 'applied'; detail: string }
  | { outcome: 'accepted'; eventId: string };

export interface WebhookIngestOptions {
  store: Store;
  clock: Clock;
  secretBox: SecretBox;
  /** The placed hooks' secrets, cached (hook-secrets.ts). */
  hookSecrets: HookSecrets;
  appWebhookSecret: string;
  messageGraceMs: number;
  /**
   * Route an event in the transaction that stores it when nothing needs to wait for a message
   * (grace period 0). A process that runs the workers does; an API-only process leaves routing to
   * the workers' router, which takes pending events in batches.
   */
  routeInline: boolean;
  /** Deepest JSON nesting accepted (ZEKT_MAX_JSON_DEPTH). */
  maxJsonDepth: number;
  logger: Logger;
  /** Called after an event was committed unrouted (it waits for a message), to wake the router. */
  onEventStored: () => void;
  /** Called after an event was routed in the transaction that stored it, to wake the dispatcher. */
  onDeliveriesCreated: () => void;
}

/** The signer of a verified request: a hook Zekt placed, or the App itself. */
export type WebhookSource = { kind: 'hook'; hook: RepositoryHookRow; pending: boolean } | { kind: 'app' };

/** How long after placing a hook its `ping` may arrive before GitHub's create call has answered. */
const HOOK_PLACEMENT_WINDOW_MS = 10 * 60_000;

export async function ingestGitHubWebhook(
  options: WebhookIngestOptions,
  request: WebhookRequest,
): Promise<WebhookOutcome> {
  if (!request.signature256) {
    return {
      outcome: 'unauthorized',
      detail:
        'X-Hub-Signature-256 is missing: configure a webhook secret (every Zekt webhook must be signed)',
    };
  }
  const source = await identifySigner(options, request);
  if (!source) {
    return {
      outcome: 'unauthorized',
      detail:
        'the X-Hub-Signature-256 signature does not match: for the App webhook, check that GITHUB_WEBHOOK_SECRET equals the secret in the GitHub App settings',
    };
  }
  if (!/^application\/json\b/i.test(request.contentType ?? '')) {
    return {
      outcome: 'unsupported',
      detail: `webhooks must be sent as application/json (got ${request.contentType ?? 'no content type'}): set the hook's content type to JSON`,
    };
  }
  if (!request.event || !request.deliveryGuid) {
    return { outcome: 'malformed', detail: 'X-GitHub-Event and X-GitHub-Delivery headers are required' };
  }
  let body: unknown;
  try {
    body = parseBoundedJson(request.rawBody.toString('utf8'), options.maxJsonDepth);
  } catch (error) {
    if (error instanceof JsonTooDeepError) {
      return {
        outcome: 'too_deep',
        detail: `the webhook body nests arrays and objects more than ${options.maxJsonDepth} levels deep (ZEKT_MAX_JSON_DEPTH)`,
      };
    }
    return {
      outcome: 'malformed',
      detail: `the webhook body is not valid JSON: ${(error as Error).message}`,
    };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { outcome: 'malformed', detail: 'the webhook body must be a JSON object' };
  }
  const payload = body as Record<string, unknown>;
  const delivery = { guid: request.deliveryGuid, event: request.event, hookId: numeric(request.hookId) };

  switch (request.event) {
    case 'ping':
      if (source.kind === 'hook' && source.pending && typeof payload.hook_id === 'number') {
        // The create call's answer may be lost; the authenticated ping tells us the hook id too.
        await completeHookPlacement(
          options.store.db,
          Number(source.hook.repository_id),
          source.hook.role,
          payload.hook_id,
          options.clock.now(),
        );
      }
      return { outcome: 'pong' };
    case 'installation':
    case 'installation_repositories':
      if (source.kind !== 'app') {
        return {
          outcome: 'ignored',
          detail: `${request.event} events are only accepted from the App webhook`,
        };
      }
      return applyInstallationEvent(options, delivery, payload);
    case 'workflow_run':
      if (source.kind !== 'hook') {
        return {
          outcome: 'ignored',
          detail:
            'workflow_run events are routed from the repository webhooks Zekt places, not the App webhook',
        };
      }
      if (source.hook.role === 'provider')
        return storeCompletionEvent(options, delivery, source.hook, payload);
      return trackConsumerRun(options, delivery, source.hook, payload);
    default:
      return { outcome: 'ignored', detail: `${request.event} events are not used by Zekt` };
  }
}

async function identifySigner(
  options: WebhookIngestOptions,
  request: WebhookRequest,
  fresh = false,
): Promise<WebhookSource | null> {
  const hookId = numeric(request.hookId);
  const known = hookId === null ? undefined : await options.hookSecrets.byId(hookId, { fresh });
  if (known) {
    const index = await findSigningSecret([known.secret], request.rawBody, request.signature256);
    if (index === 0) return { kind: 'hook', hook: known.hook, pending: false };
    // The cached hook may have changed since: decide on what the store says now.
    return known.cached ? identifySigner(options, request, true) : null;
  }
  const targetId = request.targetType === 'repository' ? numeric(request.targetId) : null;
  const beingPlaced =
    targetId === null
      ? []
      : await findHooksBeingPlaced(
          options.store.db,
          targetId,
          options.clock.now() - HOOK_PLACEMENT_WINDOW_MS,
          hookId,
        );
  const secrets = [
    ...beingPlaced.map((hook) => options.secretBox.open(hook.secret_encrypted)),
    options.appWebhookSecret,
  ];
  const index = await findSigningSecret(secrets, request.rawBody, request.signature256);
  if (index === -1) return null;
  const hook = beingPlaced[index];
  return hook ? { kind: 'hook', hook, pending: hook.hook_id === null } : { kind: 'app' };
}

function numeric(value: string | undefined): number | null {
  if (value === undefined || !/^\d{1,15}$/.test(value)) return null;
  return Number(value);
}
