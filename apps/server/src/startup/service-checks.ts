import type { ServiceFacts } from '../domain/service-checks.js';
import { gatherServiceFacts, type ServiceFactsInput } from './service-facts.js';

/**
 * The checks as the running server offers them to the console: the facts are gathered at most
 * once per `cacheMs` (each gathering calls GitHub four or five times, the issuer and the alert
 * URL once), and callers asking meanwhile share the gathering under way.
 */
export interface ServiceChecks {
  facts(): Promise<ServiceFacts>;
}

export const SERVICE_CHECKS_CACHE_MS = 30_000;

export function createServiceChecks(
  inputOf: () => ServiceFactsInput | Promise<ServiceFactsInput>,
  options: { cacheMs?: number; now?: () => number } = {},
): ServiceChecks {
  const now = options.now ?? Date.now;
  const cacheMs = options.cacheMs ?? SERVICE_CHECKS_CACHE_MS;
  let cached: { at: number; facts: Promise<ServiceFacts> } | null = null;
  return {
    facts() {
      if (cached === null || now() - cached.at >= cacheMs) {
        const facts = (async () => gatherServiceFacts(await inputOf()))();
        const entry = { at: now(), facts };
        cached = entry;
        // A gathering that failed is not kept: the next caller tries again.
        facts.catch(() => {
          if (cached === entry) cached = null;
        });
      }
      return cached.facts;
    },
  };
}
