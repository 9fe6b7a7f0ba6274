import { SimInputError } from './sim-input-error.js';
import type { Fault, FaultRule, FaultRuleStatus } from './types.js';

const KINDS: ReadonlySet<Fault['kind']> = new Set([
  'status',
  'rate_limit',
  'secondary_rate_limit',
  'retry_after',
  'latency',
  'hang',
  'reset',
]);

/** Longest delay or wait a fault may ask for; a typo (seconds for ms) should not hang a suite. */
const MAX_SECONDS = 24 * 3600;
const MAX_DELAY_MS = 10 * 60 * 1000;

interface LiveRule {
  id: string;
  method: string | undefined;
  path: string;
  segments: string[];
  faults: Fault[];
  repeat: boolean;
  /** Index of the next fault to serve. */
  next: number;
  served: number;
}

/** A fault chosen for one request. */
export interface ChosenFault {
  ruleId: string;
  fault: Fault;
}

function fail(message: string): never {
  throw new SimInputError(`fault rule: ${message}`);
}

function optionalInteger(value: unknown, what: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(`${what} must be an integer from ${min} to ${max}; got ${JSON.stringify(value)}`);
  }
  return value;
}

function oneOf<T>(value: unknown, allowed: readonly T[], what: string): T | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) fail(`${what} must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** Checks one fault and copies only its known fields (the control API passes raw JSON). */
function validateFault(raw: unknown, index: number): Fault {
  const at = `faults[${index}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(`${at} must be an object`);
  const fault = raw as Record<string, unknown>;
  const kind = fault.kind as Fault['kind'];
  if (!KINDS.has(kind)) fail(`${at}.kind must be one of ${[...KINDS].join(', ')}`);
  switch (kind) {
    case 'status': {
      const status = optionalInteger(fault.status, `${at}.status`, 200, 599);
      if (status === undefined) fail(`${at}.status is required`);
      const headers = fault.headers;
      if (
        headers !== undefined &&
        (typeof headers !== 'object' ||
          headers === null ||
          Array.isArray(headers) ||
          Object.values(headers).some((value) => typeof value !== 'string'))
      ) {
        fail(`${at}.headers must be an object of strings`);
      }
      return {
        kind,
        status,
        ...(headers === undefined ? {} : { headers: { ...(headers as Record<string, string>) } }),
        ...(fault.body === undefined ? {} : { body: structuredClone(fault.body) }),
      };
    }
    case 'rate_limit': {
      const status = oneOf(fault.status, [403, 429] as const, `${at}.status`);
      const resetInSeconds = optionalInteger(fault.resetInSeconds, `${at}.resetInSeconds`, 0, MAX_SECONDS);
      return {
        kind,
        ...(status === undefined ? {} : { status }),
        ...(resetInSeconds === undefined ? {} : { resetInSeconds }),
      };
    }
    case 'secondary_rate_limit': {
      const status = oneOf(fault.status, [403, 429] as const, `${at}.status`);
      const retryAfterSeconds = optionalInteger(
        fault.retryAfterSeconds,
        `${at}.retryAfterSeconds`,
        0,
        MAX_SECONDS,
      );
      return {
        kind,
        ...(status === undefined ? {} : { status }),
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      };
    }
    case 'retry_after': {
      const status = oneOf(fault.status, [429, 503] as const, `${at}.status`);
      const retryAfterSeconds = optionalInteger(
        fault.retryAfterSeconds,
        `${at}.retryAfterSeconds`,
        0,
        MAX_SECONDS,
      );
      if (retryAfterSeconds === undefined) fail(`${at}.retryAfterSeconds is required`);
      return { kind, retryAfterSeconds, ...(status === undefined ? {} : { status }) };
    }
    case 'latency': {
      const delayMs = optionalInteger(fault.delayMs, `${at}.delayMs`, 0, MAX_DELAY_MS);
      if (delayMs === undefined) fail(`${at}.delayMs is required`);
      return { kind, delayMs };
    }
    case 'hang':
    case 'reset':
      return { kind };
  }
}

/** `/repos/a/b/` → `['repos', 'a', 'b']`, lower-cased (GitHub's names are case-insensitive). */
function segmentsOf(path: string): string[] {
  return path
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => segment.toLowerCase());
}

/**
 * The simulator's fault rules (`injectFaults`). The API plugin asks `take` for every REST request;
 * the rule bookkeeping lives here, serving the faults lives in `http/fault-injection.ts`.
 */
export class FaultInjector {
  private readonly rules: LiveRule[] = [];
  private seq = 1;

  inject(raw: FaultRule): { id: string } {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('the rule must be an object');
    const { method, path, faults, repeat } = raw;
    if (method !== undefined && (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method))) {
      fail(`method must be an HTTP method such as "POST"; got ${JSON.stringify(method)}`);
    }
    if (typeof path !== 'string' || !path.startsWith('/') || /[?#\s]/.test(path)) {
      fail(`path must be an API path such as "/repos/*/*/dispatches"; got ${JSON.stringify(path)}`);
    }
    if (!Array.isArray(faults) || faults.length === 0) fail('faults must be a non-empty array');
    if (repeat !== undefined && typeof repeat !== 'boolean') fail('repeat must be a boolean');
    // Accept the full path too: people copy it from the journal, which records `/api/v3/...`.
    const apiPath = path.replace(/^\/api\/v3(?=\/|$)/i, '') || '/';
    const rule: LiveRule = {
      id: `fault-${this.seq++}`,
      method: method?.toUpperCase(),
      path: apiPath,
      segments: segmentsOf(apiPath),
      faults: faults.map(validateFault),
      repeat: repeat ?? false,
      next: 0,
      served: 0,
    };
    this.rules.push(rule);
    return { id: rule.id };
  }

  /** Removes one rule, or all of them. */
  clear(id?: string): void {
    if (id === undefined) {
      this.rules.length = 0;
      return;
    }
    const index = this.rules.findIndex((rule) => rule.id === id);
    if (index === -1) throw new SimInputError(`no fault rule ${id}`);
    this.rules.splice(index, 1);
  }

  list(): FaultRuleStatus[] {
    return this.rules.map((rule) => ({
      id: rule.id,
      ...(rule.method === undefined ? {} : { method: rule.method }),
      path: rule.path,
      faults: structuredClone(rule.faults),
      repeat: rule.repeat,
      remaining: rule.faults.length - rule.next,
      served: rule.served,
    }));
  }

  /**
   * Consumes and returns the fault for a request, if a live rule matches. `apiPath` is the path
   * without `/api/v3` and without the query string.
   */
  take(method: string, apiPath: string): ChosenFault | undefined {
    const segments = segmentsOf(apiPath);
    const upper = method.toUpperCase();
    const rule = this.rules.find(
      (candidate) =>
        candidate.next < candidate.faults.length &&
        (candidate.method === undefined || candidate.method === upper) &&
        candidate.segments.length === segments.length &&
        candidate.segments.every((segment, i) => segment === '*' || segment === segments[i]),
    );
    if (rule === undefined) return undefined;
    const fault = rule.faults[rule.next] as Fault;
    rule.next += 1;
    rule.served += 1;
    if (rule.repeat && rule.next === rule.faults.length) rule.next = 0;
    return { ruleId: rule.id, fault };
  }
}
