import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { JournalAuth } from '../types.js';

/** What the simulator learns about a request while answering it, for headers and the journal. */
export interface RequestState {
  startedAt: number;
  requestId: string;
  auth: JournalAuth;
  /** Which rate-limit bucket the request counts against. */
  rateKey: string;
  /** The simulator's own failure (a bug), recorded in the journal. */
  error?: string;
}

const states = new WeakMap<IncomingMessage, RequestState>();

export function setRequestState(request: FastifyRequest, state: RequestState): void {
  states.set(request.raw, state);
}

export function getRequestState(request: FastifyRequest): RequestState | undefined {
  return states.get(request.raw);
}
