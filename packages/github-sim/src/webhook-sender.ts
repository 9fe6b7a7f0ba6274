import { type Clock, toGitHubTimestamp } from './clock.js';
import { httpRequest } from './http-client.js';
import { newGuid, randomHex } from './ids.js';
import type { WebhookDeliveryRecord } from './types.js';
import { signatureHeaders } from './webhook-signature.js';

/** GitHub gives a receiver 10 seconds to answer a delivery. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** Where a delivery goes, resolved when it is sent (and again when it is redelivered). */
export interface WebhookTarget {
  hookType: 'repository' | 'app';
  hookId: number;
  /** null: the App has no webhook URL; the delivery is recorded as skipped. */
  url: string | null;
  /** Signs the delivery when set. */
  secret: string | undefined;
  /** `X-GitHub-Hook-Installation-Target-Type`: `repository` or `integration` (the App hook). */
  targetType: 'repository' | 'integration';
  /** `X-GitHub-Hook-Installation-Target-ID`: the repository id or the App id. */
  targetId: number;
  /** Full name of the repository of a repository hook. */
  repository: string | null;
}

/** What a drop rule (webhook-drops.ts) makes of a delivery: no answer at all, or the answer `status`. */
export interface DropDecision {
  ruleId: string;
  status: number | null;
}

interface SentDelivery {
  guid: string;
  event: string;
  body: string;
  hookType: WebhookTarget['hookType'];
  hookId: number;
}

/** One event's delivery to one hook: a GUID is the event's, so it names a delivery only with its hook. */
const sentKey = (sent: Pick<SentDelivery, 'guid' | 'hookType' | 'hookId'>) =>
  `${sent.hookType}:${sent.hookId}:${sent.guid}`;

export interface WebhookSenderOptions {
  clock: Clock;
  /** Receives every finished delivery, in the order they finish. */
  record: (delivery: WebhookDeliveryRecord) => void;
  /** GitHub's id of the next delivery attempt. */
  nextDeliveryId: () => number;
  /** Whether a drop rule fails this delivery without sending it (`dropWebhooks`). */
  drop?: (target: WebhookTarget, event: string) => DropDecision | undefined;
  timeoutMs?: number;
}

/**
 * Sends webhooks the way GitHub's "Hookshot" does: one POST with a JSON body, GitHub's headers,
 * the signature of the exact body bytes, a 10 s timeout, and a record of what happened.
 * https://docs.github.com/webhooks/webhook-events-and-payloads#delivery-headers
 */
export class WebhookSender {
  private readonly userAgent = `GitHub-Hookshot/${randomHex(4).slice(0, 7)}`;
  private readonly sent = new Map<string, SentDelivery>();
  private readonly inFlight = new Set<{ controller: AbortController; done: Promise<unknown> }>();
  private closed = false;

  constructor(private readonly options: WebhookSenderOptions) {}

  /**
   * Sends one event to one hook and resolves with its record once it finished. `guid` is the
   * event's: GitHub gives one event the same `X-GitHub-Delivery` on every hook that receives it
   * ("shared with all deliveries for all webhooks that subscribe to this event",
   * https://docs.github.com/rest/repos/webhooks#list-deliveries-for-a-repository-webhook), so a
   * caller sending one event to several hooks passes the same GUID to each; by default the
   * delivery is an event of its own.
   */
  send(
    target: WebhookTarget,
    event: string,
    payload: unknown,
    guid: string = newGuid(),
  ): Promise<WebhookDeliveryRecord> {
    const body = JSON.stringify(payload);
    const sent = { guid, event, body, hookType: target.hookType, hookId: target.hookId };
    this.sent.set(sentKey(sent), sent);
    return this.deliver(guid, target, event, body, false);
  }

  /** What was sent under a GUID, one entry per hook it went to, for redelivery. */
  sentDeliveries(guid: string): SentDelivery[] {
    return [...this.sent.values()].filter((sent) => sent.guid === guid);
  }

  /**
   * Sends the same body under the same GUID to the same hook again, like GitHub's "Redeliver"
   * button: "the X-GitHub-Delivery header will be the same as in the original delivery"
   * (https://docs.github.com/webhooks/using-webhooks/best-practices-for-using-webhooks).
   */
  redeliver(guid: string, target: WebhookTarget): Promise<WebhookDeliveryRecord> {
    const sent = this.sent.get(sentKey({ guid, hookType: target.hookType, hookId: target.hookId }));
    if (sent === undefined) throw new Error(`no delivery with GUID ${guid} to hook ${target.hookId}`);
    return this.deliver(guid, target, sent.event, sent.body, true);
  }

  /** Aborts deliveries still waiting for a receiver and waits until they are recorded. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = [...this.inFlight];
    for (const entry of pending) entry.controller.abort();
    await Promise.allSettled(pending.map((entry) => entry.done));
  }

  private deliver(
    guid: string,
    target: WebhookTarget,
    event: string,
    body: string,
    redelivery: boolean,
  ): Promise<WebhookDeliveryRecord> {
    const controller = new AbortController();
    const done = this.attempt(guid, target, event, body, redelivery, controller.signal);
    const entry = { controller, done };
    this.inFlight.add(entry);
    return done.finally(() => this.inFlight.delete(entry));
  }

  private async attempt(
    guid: string,
    target: WebhookTarget,
    event: string,
    body: string,
    redelivery: boolean,
    signal: AbortSignal,
  ): Promise<WebhookDeliveryRecord> {
    const payload: unknown = JSON.parse(body);
    const action =
      typeof payload === 'object' &&
      payload !== null &&
      typeof (payload as { action?: unknown }).action === 'string'
        ? (payload as { action: string }).action
        : null;
    const headers: Record<string, string> = {
      Accept: '*/*',
      'Content-Type': 'application/json',
      'User-Agent': this.userAgent,
      'X-GitHub-Delivery': guid,
      'X-GitHub-Event': event,
      'X-GitHub-Hook-ID': String(target.hookId),
      'X-GitHub-Hook-Installation-Target-ID': String(target.targetId),
      'X-GitHub-Hook-Installation-Target-Type': target.targetType,
      ...(target.secret !== undefined ? signatureHeaders(target.secret, body) : {}),
    };
    const base = {
      id: this.options.nextDeliveryId(),
      guid,
      event,
      action,
      hookId: target.hookId,
      hookType: target.hookType,
      repository: target.repository,
      url: target.url,
      requestHeaders: headers,
      payload,
      deliveredAt: toGitHubTimestamp(this.options.clock.now()),
      redelivery,
    };
    let record: WebhookDeliveryRecord;
    const dropped = target.url === null ? undefined : this.options.drop?.(target, event);
    if (dropped !== undefined) {
      record = {
        ...base,
        status: dropped.status,
        responseBody: dropped.status === null ? null : '',
        durationMs: 0,
        error: dropped.status === null ? 'failed to connect' : null,
        droppedBy: dropped.ruleId,
      };
    } else if (target.url === null) {
      record = { ...base, status: null, responseBody: null, durationMs: 0, error: 'no webhook URL' };
    } else if (this.closed) {
      record = { ...base, status: null, responseBody: null, durationMs: 0, error: 'simulator closed' };
    } else {
      const started = performance.now();
      try {
        const response = await httpRequest({
          method: 'POST',
          url: target.url,
          headers,
          body,
          timeoutMs: this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
          signal,
        });
        record = {
          ...base,
          status: response.status,
          responseBody: response.body,
          durationMs: Math.round(performance.now() - started),
          error: null,
        };
      } catch (error) {
        record = {
          ...base,
          status: null,
          responseBody: null,
          durationMs: Math.round(performance.now() - started),
          error: signal.aborted ? 'simulator closed' : error instanceof Error ? error.message : String(error),
        };
      }
    }
    this.options.record(record);
    return record;
  }
}
