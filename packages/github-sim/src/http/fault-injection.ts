import { STATUS_CODES } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { epochSeconds } from '../clock.js';
import { GENERIC_DOCUMENTATION_URL, type GitHubErrorBody } from '../github-error.js';
import type { SimContext } from '../sim-context.js';
import type { Fault } from '../types.js';
import { authenticate, type Caller } from './request-auth.js';
import { getRequestState, type RequestState } from './request-state.js';
import { journalRequest } from './request-tracking.js';

/**
 * GitHub's primary-rate-limit answer names who ran out: `API rate limit exceeded for installation
 * ID 19497584.` (dawidd6/action-download-artifact#163, bobheadxi/deployments#67,
 * KnpLabs/php-github-api#1070, which also shows it comes as a 403); for an App JWT `API rate limit
 * exceeded for app ID …`; for a user token `API rate limit exceeded for user ID …`; for
 * unauthenticated callers `API rate limit exceeded for <ip>. (But here's the good news: …)` with
 * the older documentation URL (rust-lang/rustlings#1208).
 * The documentation URL of the installation/App case was not found in a captured body; this is the
 * docs page's "About primary rate limits" section.
 */
export const PRIMARY_RATE_LIMIT_DOCUMENTATION_URL =
  'https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-primary-rate-limits';
const ANONYMOUS_RATE_LIMIT_DOCUMENTATION_URL =
  'https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting';

/**
 * GitHub's secondary-rate-limit answer, as captured in github-changelog-generator#993 (2023, a 403):
 * `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you
 * reach out to GitHub Support for help, please include the request ID FA2D:87B1:…:6570B7E6.`
 * with this documentation URL. Older answers stop after "try again." (apache/devlake#1322,
 * app-sre/github-mirror#62). Octokit's throttling plugin recognises it by "secondary rate".
 */
export const SECONDARY_RATE_LIMIT_DOCUMENTATION_URL =
  'https://docs.github.com/en/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits';

/** Default wait GitHub's docs tell clients to use when no header says otherwise: one minute. */
const DEFAULT_WAIT_SECONDS = 60;

function basicError(status: number, message: string, documentationUrl: string): GitHubErrorBody {
  return { message, documentation_url: documentationUrl, status: String(status) };
}

/**
 * Who is calling, for the rate-limit message and the journal. A fault is served whatever the
 * credentials are (the test asked for it), so a rejected credential is recorded, not answered.
 */
async function callerOf(ctx: SimContext, request: FastifyRequest): Promise<Caller | undefined> {
  try {
    return await authenticate(ctx, request);
  } catch {
    return undefined;
  }
}

function primaryRateLimitMessage(request: FastifyRequest, caller: Caller | undefined) {
  if (caller?.kind === 'installation') {
    return {
      message: `API rate limit exceeded for installation ID ${caller.installation.id}.`,
      documentationUrl: PRIMARY_RATE_LIMIT_DOCUMENTATION_URL,
    };
  }
  if (caller?.kind === 'app') {
    return {
      message: `API rate limit exceeded for app ID ${caller.app.id}.`,
      documentationUrl: PRIMARY_RATE_LIMIT_DOCUMENTATION_URL,
    };
  }
  // A user token counts against the user's own limit.
  if (caller?.kind === 'user') {
    return {
      message: `API rate limit exceeded for user ID ${caller.user.id}.`,
      documentationUrl: PRIMARY_RATE_LIMIT_DOCUMENTATION_URL,
    };
  }
  return {
    message: `API rate limit exceeded for ${request.ip}. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)`,
    documentationUrl: ANONYMOUS_RATE_LIMIT_DOCUMENTATION_URL,
  };
}

/** A `status` fault's answer: its body as given (strings as text), or GitHub's basic error. */
function sendStatusFault(
  reply: FastifyReply,
  state: RequestState,
  fault: Extract<Fault, { kind: 'status' }>,
): FastifyReply {
  const headers = fault.headers ?? {};
  state.headerOverrides = headers;
  reply.code(fault.status);
  const hasContentType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  if (fault.status === 204 || fault.status === 304) return reply.send();
  let body = fault.body;
  if (body === undefined && fault.status >= 400) {
    body = basicError(fault.status, STATUS_CODES[fault.status] ?? 'Error', GENERIC_DOCUMENTATION_URL);
  }
  if (body === undefined) return reply.send();
  if (typeof body === 'string') {
    if (!hasContentType) reply.type('text/plain; charset=utf-8');
    return reply.send(body);
  }
  // Serialised here so that a custom content type never makes Fastify refuse an object body.
  if (!hasContentType) reply.type('application/json; charset=utf-8');
  return reply.send(JSON.stringify(body));
}

/**
 * Serves the faults of `injectFaults` on the REST API. It runs as a `preHandler`, after the body
 * was read (so the journal shows it) and before the route: `latency` then lets the route answer,
 * every other kind answers (or drops the connection) itself.
 */
export function installFaultInjection(api: FastifyInstance, ctx: SimContext): void {
  api.addHook('preHandler', async (request, reply) => {
    const state = getRequestState(request);
    if (state === undefined) return;
    const apiPath = new URL(request.url, 'http://sim.invalid').pathname.replace(/^\/api\/v3/, '') || '/';
    const chosen = ctx.faults.take(request.method, apiPath);
    if (chosen === undefined) return;
    const { fault } = chosen;
    state.fault = { ruleId: chosen.ruleId, kind: fault.kind };

    if (fault.kind === 'latency') {
      try {
        await sleep(fault.delayMs, undefined, { signal: ctx.shutdown });
      } catch {
        // The simulator is closing; its connections are being destroyed anyway.
      }
      return;
    }

    const caller = await callerOf(ctx, request);
    switch (fault.kind) {
      case 'hang': {
        reply.hijack();
        state.error = 'hang';
        const entry = journalRequest(ctx, request, state, 0, null);
        // The journal entry exists at once (tests can see the hang); its duration is how long the
        // client waited before giving up (or the simulator closed).
        request.raw.socket.once('close', () => {
          entry.durationMs = Math.round(performance.now() - state.startedAt);
        });
        return;
      }
      case 'reset': {
        reply.hijack();
        state.error = 'reset';
        journalRequest(ctx, request, state, 0, null);
        // An RST, not a FIN: the client sees ECONNRESET rather than a clean "other side closed".
        request.raw.socket.resetAndDestroy();
        return;
      }
      case 'status':
        return sendStatusFault(reply, state, fault);
      case 'rate_limit': {
        const status = fault.status ?? 403;
        state.rateLimitExhaustedUntil =
          epochSeconds(ctx.clock) + (fault.resetInSeconds ?? DEFAULT_WAIT_SECONDS);
        const { message, documentationUrl } = primaryRateLimitMessage(request, caller);
        return reply.code(status).send(basicError(status, message, documentationUrl));
      }
      case 'secondary_rate_limit': {
        const status = fault.status ?? 403;
        const message = `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${state.requestId}.`;
        return reply
          .code(status)
          .header('retry-after', String(fault.retryAfterSeconds ?? DEFAULT_WAIT_SECONDS))
          .send(basicError(status, message, SECONDARY_RATE_LIMIT_DOCUMENTATION_URL));
      }
      case 'retry_after': {
        const status = fault.status ?? 503;
        return reply
          .code(status)
          .header('retry-after', String(fault.retryAfterSeconds))
          .send(basicError(status, STATUS_CODES[status] ?? 'Error', GENERIC_DOCUMENTATION_URL));
      }
    }
  });
}
