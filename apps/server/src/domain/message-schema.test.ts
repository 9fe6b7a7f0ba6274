import { describe, expect, it } from 'vitest';
import {
  decideMessage,
  localSchemaProblem,
  MAX_REPORTED_ERRORS,
  reportedErrors,
  type SchemaCheck,
} from './message-schema.js';
import { decideRouting, type RoutableSubscription } from './routing.js';

describe('what a schema may hold', () => {
  it('accepts local references, draft 2020-12 and the formats Zekt checks', () => {
    expect(
      localSchemaProblem({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $defs: { v: { type: 'string', format: 'date-time' } },
        properties: { at: { $ref: '#/$defs/v' }, self: { $dynamicRef: '#node' } },
      }),
    ).toBeNull();
    expect(localSchemaProblem(true)).toBeNull();
  });

  it('refuses a remote $ref with its pointer; a $ref inside enum or const is data, not a reference', () => {
    expect(
      localSchemaProblem({ properties: { a: { items: { $ref: 'https://example.com/s.json' } } } }),
    ).toEqual({
      pointer: '/properties/a/items/$ref',
      message: expect.stringContaining('only local references'),
    });
    expect(localSchemaProblem({ anyOf: [{}, { $ref: 'other.json#/x' }] })?.pointer).toBe('/anyOf/1/$ref');
    expect(localSchemaProblem({ enum: [{ $ref: 'https://example.com' }], const: { $ref: 'x' } })).toBeNull();
    expect(localSchemaProblem({ properties: { $ref: { type: 'string' } } })).toBeNull();
  });

  it('refuses another draft, an unknown format and what is not a schema', () => {
    expect(localSchemaProblem({ $schema: 'http://json-schema.org/draft-07/schema#' })).toEqual({
      pointer: '/$schema',
      message: expect.stringContaining('draft 2020-12'),
    });
    expect(localSchemaProblem({ properties: { 'a/b': { format: 'semver' } } })).toEqual({
      pointer: '/properties/a~1b/format',
      message: expect.stringContaining('unknown format "semver"'),
    });
    expect(localSchemaProblem([])?.pointer).toBe('');
    expect(localSchemaProblem('{}')?.pointer).toBe('');
  });
});

describe('what the checks of a message decide', () => {
  const check = (overrides: Partial<SchemaCheck>): SchemaCheck => ({
    serviceId: 'svc_a',
    slug: 'a',
    version: 1,
    enforcement: 'enforce',
    errors: [],
    errorCount: 0,
    timedOut: false,
    ...overrides,
  });
  const violation = { pointer: '/version', message: 'must be string' };

  it('accepts a message every schema passed, with the version each checked', () => {
    expect(
      decideMessage([check({}), check({ serviceId: 'svc_b', slug: 'b', version: 3, enforcement: 'warn' })]),
    ).toEqual({
      outcome: 'accepted',
      violations: [],
      versions: { svc_a: 1, svc_b: 3 },
    });
  });

  it('refuses a message an enforced schema refuses, whatever the others say; the first by slug reports', () => {
    const verdict = decideMessage([
      check({ serviceId: 'svc_z', slug: 'zeta', errors: [violation], errorCount: 1 }),
      check({ serviceId: 'svc_b', slug: 'beta', enforcement: 'warn', errors: [violation], errorCount: 1 }),
      check({ serviceId: 'svc_a', slug: 'alpha', timedOut: true }),
    ]);
    expect(verdict.outcome).toBe('refused');
    if (verdict.outcome !== 'refused') return;
    expect(verdict.check.slug).toBe('alpha');
    expect(verdict.refusedBy.map((c) => c.slug)).toEqual(['alpha', 'zeta']);
  });

  it('accepts a message only warn-mode schemas refuse, and names those violations', () => {
    const verdict = decideMessage([
      check({ enforcement: 'warn', errors: [violation], errorCount: 1 }),
      check({ serviceId: 'svc_b', slug: 'b' }),
    ]);
    expect(verdict).toEqual({
      outcome: 'accepted',
      violations: [check({ enforcement: 'warn', errors: [violation], errorCount: 1 })],
      versions: { svc_a: 1, svc_b: 1 },
    });
  });

  it('reports at most 20 violations and counts them all', () => {
    const many = Array.from({ length: 45 }, (_, i) => ({ pointer: `/${i}`, message: 'x' }));
    const reported = reportedErrors(many);
    expect(reported.errors).toHaveLength(MAX_REPORTED_ERRORS);
    expect(reported.errors[19]!.pointer).toBe('/19');
    expect(reported.errorCount).toBe(45);
  });
});

describe('a run without a message, when a schema requires one', () => {
  const subscription = (overrides: Partial<RoutableSubscription>): RoutableSubscription => ({
    subscriptionId: 'sub_1',
    serviceId: 'svc_1',
    serviceEventType: 'deployed',
    consumerAccountId: 2,
    consumerRepositoryId: 20,
    durable: false,
    completionTracking: false,
    schema: { slug: 'deploys', version: 2, enforcement: 'enforce', requiresMessage: true },
    ...overrides,
  });

  it('is blocked when an enforced schema requires a message', () => {
    expect(
      decideRouting({ whitelisted: true, subscriptions: [subscription({})], message: undefined }),
    ).toEqual({
      outcome: 'blocked',
      reason: 'message_missing',
      missingMessage: [{ serviceId: 'svc_1', slug: 'deploys', version: 2, enforcement: 'enforce' }],
    });
  });

  it('is routed, the missing message recorded, when the schema only warns', () => {
    const decision = decideRouting({
      whitelisted: true,
      subscriptions: [
        subscription({ schema: { slug: 'deploys', version: 2, enforcement: 'warn', requiresMessage: true } }),
        // Two subscriptions of one service: recorded once.
        subscription({
          subscriptionId: 'sub_2',
          schema: { slug: 'deploys', version: 2, enforcement: 'warn', requiresMessage: true },
        }),
      ],
      message: undefined,
    });
    expect(decision.outcome).toBe('routed');
    if (decision.outcome !== 'routed') return;
    expect(decision.deliveries).toHaveLength(2);
    expect(decision.missingMessage).toEqual([
      { serviceId: 'svc_1', slug: 'deploys', version: 2, enforcement: 'warn' },
    ]);
  });

  it('is routed as before when the schema accepts null, is off, or the run sent a message', () => {
    for (const schema of [
      { slug: 'deploys', version: 2, enforcement: 'enforce' as const, requiresMessage: false },
      { slug: 'deploys', version: 2, enforcement: 'off' as const, requiresMessage: true },
      null,
    ]) {
      const decision = decideRouting({
        whitelisted: true,
        subscriptions: [subscription({ schema })],
        message: undefined,
      });
      expect(decision).toMatchObject({ outcome: 'routed', missingMessage: [] });
    }
    const withMessage = decideRouting({
      whitelisted: true,
      subscriptions: [subscription({})],
      message: { eventType: 'deployed', schemaVersions: { svc_1: 2 } },
    });
    expect(withMessage.outcome === 'routed' && withMessage.deliveries[0]!.schemaVersion).toBe(2);
  });
});
