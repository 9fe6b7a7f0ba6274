import type { FastifyInstance, FastifyRequest } from 'fastify';
import { epochSeconds, toGitHubTimestamp } from '../clock.js';
import type { SimContext } from '../sim-context.js';
import type { JournalEntry } from '../types.js';
import type { RateLimits } from './rate-limit.js';
import { getRequestState, type RequestState, setRequestState } from './request-state.js';

/**
 * GitHub's request id format, e.g. `C0DE:1A2B:3C4D5E:6F7A8B:65F1A2B3`. Every request gets one, and
 * it is no secret (it names a request in a support ticket): `Math.random`, not the CSPRNG, whose
 * five draws per request were 9 % of the simulator's time under `zekt bench` (CPU it takes from
 * the targets it measures).
 */
export function newRequestId(): string {
  const hex = (digits: number) =>
    Math.floor(Math.random() * 16 ** digits)
      .toString(16)
      .padStart(digits, '0');
  return `${hex(4)}:${hex(4)}:${hex(6)}:${hex(6)}:${hex(8)}`.toUpperCase();
}

function parseMaybeJson(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? null;
  if (value === '') return null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/**
 * Writes one request to the journal. Also used for requests that got no HTTP answer (an injected
 * `reset` or `hang`), which never reach `onSend`.
 */
export function journalRequest(
  ctx: SimContext,
  request: FastifyRequest,
  state: RequestState,
  status: number,
  payload: unknown,
): JournalEntry {
  const url = new URL(request.url, 'http://sim.invalid');
  const entry: JournalEntry = {
    id: ctx.state.nextJournalId(),
    at: toGitHubTimestamp(ctx.clock.now()),
    receivedAt: new Date(state.receivedAt).toISOString(),
    method: request.method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    requestId: state.requestId,
    requestHeaders: flattenHeaders(request.headers),
    requestBody: parseMaybeJson(request.body),
    status,
    responseBody: parseMaybeJson(payload),
    auth: state.auth,
    durationMs: Math.round(performance.now() - state.startedAt),
  };
  if (state.error !== undefined) entry.error = state.error;
  if (state.fault !== undefined) entry.fault = state.fault;
  ctx.state.journal.push(entry);
  return entry;
}

/**
 * Adds GitHub's response headers (request id, `Date` from the simulator's clock, and with
 * `rateLimits` the `x-ratelimit-*` family) and writes every answered request to the journal.
 */
export function installRequestTracking(
  instance: FastifyInstance,
  ctx: SimContext,
  rateLimits: RateLimits | null,
): void {
  instance.addHook('onRequest', async (request) => {
    setRequestState(request, {
      startedAt: performance.now(),
      receivedAt: ctx.clock.now().getTime(),
      requestId: newRequestId(),
      auth: { kind: 'none' },
      rateKey: `anonymous:${request.ip}`,
    });
  });

  instance.addHook('onSend', async (request, reply, payload) => {
    const state = getRequestState(request);
    if (state === undefined) return payload;
    reply.header('x-github-request-id', state.requestId);
    reply.header('date', ctx.clock.now().toUTCString());
    if (rateLimits !== null) {
      reply.header('x-github-media-type', 'github.v3; format=json');
      reply.header('x-github-api-version-selected', '2022-11-28');
      const headers = rateLimits.count(state.rateKey, epochSeconds(ctx.clock));
      if (state.rateLimitExhaustedUntil !== undefined) {
        headers['x-ratelimit-remaining'] = '0';
        headers['x-ratelimit-used'] = headers['x-ratelimit-limit'] ?? '0';
        headers['x-ratelimit-reset'] = String(state.rateLimitExhaustedUntil);
      }
      for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    }
    for (const [name, value] of Object.entries(state.headerOverrides ?? {})) reply.header(name, value);
    journalRequest(ctx, request, state, reply.statusCode, payload);
    return payload;
  });
}
