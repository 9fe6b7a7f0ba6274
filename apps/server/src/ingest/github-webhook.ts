import { JsonTooDeepError, parseBoundedJson } from '../domain/bounded-json.js';
import { findSigningSecret } from '../github/webhook-signature.js';
import { completeHookPlacement, findHooksBeingPlaced } from '../store/hooks.js';
import { APP_WEBHOOK_ID } from '../store/webhook-deliveries.js';
import { storeCompletionEvent } from './completion-event.js';
import { trackConsumerRun } from './completion-tracking.js';
import { applyInstallationEvent } from './installation-events.js';
import type { WebhookIngestOptions, WebhookOutcome, WebhookRequest, WebhookSource } from './webhook-types.js';

/** How long after placing a hook its `ping` may arrive before GitHub's create call has answered. */
const HOOK_PLACEMENT_WINDOW_MS = 10 * 60_000;

/**
 * `POST /webhooks/github`: verify, classify, store — then answer. Nothing here calls GitHub. By
 * default (a process that runs the workers, no message grace period) a completed run is routed in
 * the transaction that stores it, and the deliveries the dispatcher has room for are leased to it
 * there and start once that transaction is durable (completion-event.ts, delivery/handoff.ts);
 * otherwise the stored event waits, pending, for the router loop (docs/architecture.md, Data flow).
 */
export async function ingestGitHubWebhook(
  options: WebhookIngestOptions,
  request: WebhookRequest,
): Promise<WebhookOutcome> {
  if (!request.signature256) {
    return {
      outcome: 'unauthorized',
      detail:
        'X-Hub-Signature-256 is missing: configure a webhook secret (every Zekt webhook must be signed)',
      hookId: null,
    };
  }
  const { source, placedHookId } = await identifySigner(options, request);
  if (!source) {
    return {
      outcome: 'unauthorized',
      detail:
        'the X-Hub-Signature-256 signature does not match: for the App webhook, check that GITHUB_WEBHOOK_SECRET equals the secret in the GitHub App settings',
      hookId: placedHookId,
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
  // Idempotency is per (GUID, hook), and the hook is the one the signature proved — a hook Zekt
  // placed, or the App's webhook — never the X-GitHub-Hook-ID header alone, which the signature
  // does not cover: a captured App webhook replayed under another hook id is still a duplicate.
  const delivery = {
    guid: request.deliveryGuid,
    event: request.event,
    hookId: source.kind === 'hook' ? (source.hook.hook_id ?? numeric(request.hookId)) : APP_WEBHOOK_ID,
  };

  switch (request.event) {
    case 'ping':
      if (source.kind === 'hook' && source.pending && typeof payload.hook_id === 'number') {
        // The create call's answer may be lost; the authenticated ping tells us the hook id too.
        await completeHookPlacement(
          options.store.db,
          source.hook.repository_id,
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

/**
 * Who signed the request, if anyone may have: `source` null when no secret matches.
 * `placedHookId` is the request's hook id when it names a hook Zekt placed.
 */
async function identifySigner(
  options: WebhookIngestOptions,
  request: WebhookRequest,
  fresh = false,
): Promise<{ source: WebhookSource | null; placedHookId: number | null }> {
  const hookId = numeric(request.hookId);
  const known = hookId === null ? undefined : await options.hookSecrets.byId(hookId, { fresh });
  if (known) {
    const index = await findSigningSecret([known.secret], request.rawBody, request.signature256);
    if (index === 0)
      return { source: { kind: 'hook', hook: known.hook, pending: false }, placedHookId: hookId };
    // The cached hook may have changed since: decide on what the store says now.
    return known.cached ? identifySigner(options, request, true) : { source: null, placedHookId: hookId };
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
  if (index === -1) return { source: null, placedHookId: null };
  const hook = beingPlaced[index];
  return {
    source: hook ? { kind: 'hook', hook, pending: hook.hook_id === null } : { kind: 'app' },
    placedHookId: null,
  };
}

function numeric(value: string | undefined): number | null {
  if (value === undefined || !/^\d{1,15}$/.test(value)) return null;
  return Number(value);
}
