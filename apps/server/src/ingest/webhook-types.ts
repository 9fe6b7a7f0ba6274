import type { Logger } from 'pino';
import type { DeliveryHandoff } from '../delivery/handoff.js';
import type { Clock } from '../domain/clock.js';
import type { SecretBox } from '../security/secret-box.js';
import type { RepositoryHookRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import type { Tracer } from '../tracing/tracer.js';
import type { HookSecrets } from './hook-secrets.js';

// What the webhook receiver and its handlers (completion events, completion tracking, installation
// events) share, in a leaf module so the handlers never import the receiver that calls them.

/** One request to `POST /webhooks/github`, as the HTTP layer hands it over. */
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
  /**
   * The signature is missing or wrong. `hookId`: the hook Zekt placed that the request named (its
   * failures are counted against it), or null when it named none Zekt placed (the App's webhook,
   * a stranger's hook, no `X-GitHub-Hook-ID`).
   */
  | { outcome: 'unauthorized'; detail: string; hookId: number | null }
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
  /** This process's dispatcher, when it routes inline: it takes the deliveries it has room for at creation. */
  handoff?: DeliveryHandoff | undefined;
  /** Deepest JSON nesting accepted (ZEKT_MAX_JSON_DEPTH). */
  maxJsonDepth: number;
  logger: Logger;
  /** Called after an event was committed unrouted (it waits for a message), to wake the router. */
  onEventStored: () => void;
  /** Called after an event was routed in the transaction that stored it, to wake the dispatcher. */
  onDeliveriesCreated: () => void;
  /** Spans of the run's trace (default: none). */
  tracer?: Tracer | undefined;
}

/** The signer of a verified request: a hook Zekt placed, or the App itself. */
export type WebhookSource = { kind: 'hook'; hook: RepositoryHookRow; pending: boolean } | { kind: 'app' };
