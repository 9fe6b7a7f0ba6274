import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { Fault, JournalAuth } from '../types.js';

/** What the simulator learns about a request while answering it, for headers and the journal. */
export interface RequestState {
  startedAt: number;
  /** When the request arrived, on the simulator's clock (epoch milliseconds). */
  receivedAt: number;
  requestId: string;
  auth: JournalAuth;
  /** Which rate-limit bucket the request counts against. */
  rateKey: string;
  /** The simulator's own failure (a bug), recorded in the journal. */
  error?: string;
  /** The injected fault that decided the answer, recorded in the journal. */
  fault?: { ruleId: string; kind: Fault['kind'] };
  /**
   * A primary-rate-limit fault: report the caller's bucket as empty until this epoch second
   * (`x-ratelimit-remaining: 0`, `x-ratelimit-reset`).
   */
  rateLimitExhaustedUntil?: number;
  /** Headers that win over the ones request tracking adds (a `status` fault's own headers). */
  headerOverrides?: Record<string, string>;
}

const states = new WeakMap<IncomingMessage, RequestState>();

export function setRequestState(request: FastifyRequest, state: RequestState): void {
  states.set(request.raw, state);
}

export function getRequestState(request: FastifyRequest): RequestState | undefined {
  return states.get(request.raw);
}
