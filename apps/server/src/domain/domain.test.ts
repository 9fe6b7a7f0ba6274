import { describe, expect, it } from 'vitest';
import { completedWorkflowRunExample, githubExamples } from '../../test/support/github-examples.js';
import { runSummary } from '../../test/support/run-summary.js';
import { buildDispatchBody, DISPATCH_BODY_LIMIT_BYTES } from './client-payload.js';
import { categorizeFailure } from './error-category.js';
import { describeInvalidEventType, isValidEventType } from './event-type.js';
import { firstDeliveryIdAt, firstIdAt, isDeliveryId, newDeliveryId, newId, uuidV7 } from './ids.js';
import { nextAttemptAt, requestedDelayMs } from './retry-schedule.js';
import { decideRouting, type RoutableSubscription } from './routing.js';
import { parseWorkflowRun } from './run-summary.js';
import { usageMonth } from './usage.js';
import { toWorkflowPath, workflowPathFromRef } from './workflow-path.js';

describe('ids', () => {
  it('makes seed-format delivery ids and prefixed ids that sort by time', () => {
    const id = newDeliveryId(Date.UTC(2026, 0, 1));
    expect(isDeliveryId(id)).toBe(true);
    expect(uuidV7()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const earlier = newId('evt', 1_000);
    const later = newId('evt', 2_000);
    expect(earlier < later).toBe(true);
    expect(earlier).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(isDeliveryId('delivery-not-a-uuid')).toBe(false);
  });

  it('bounds the ids made before a millisecond from those made at or after it', () => {
    const at = Date.UTC(2026, 0, 1);
    const bound = firstDeliveryIdAt(at);
    expect(isDeliveryId(bound)).toBe(true);
    for (let i = 0; i < 200; i++) {
      expect(newDeliveryId(at - 1) < bound).toBe(true);
      expect(newDeliveryId(at) >= bound).toBe(true);
      expect(newId('evt', at - 1) < firstIdAt('evt', at)).toBe(true);
      expect(newId('evt', at) >= firstIdAt('evt', at)).toBe(true);
    }
    expect(newDeliveryId(0) < firstDeliveryIdAt(1)).toBe(true);
  });
});

describe('event types', () => {
  it('accepts 1–100 characters of [A-Za-z0-9._:-] and explains refusals', () => {
    expect(isValidEventType('deploy.finished:v1_x-y')).toBe(true);
    expect(isValidEventType('a'.repeat(100))).toBe(true);
    expect(isValidEventType('a'.repeat(101))).toBe(false);
    expect(isValidEventType('')).toBe(false);
    expect(isValidEventType('has space')).toBe(false);
    expect(isValidEventType(42)).toBe(false);
    expect(describeInvalidEventType('a'.repeat(101))).toContain('at most 100');
    expect(describeInvalidEventType('bad type!')).toContain('" !"');
  });
});

describe('workflow paths', () => {
  it('normalises file names and reads workflow_ref claims', () => {
    expect(toWorkflowPath('deploy.yml')).toBe('.github/workflows/deploy.yml');
    expect(toWorkflowPath('.github/workflows/ci.yaml')).toBe('.github/workflows/ci.yaml');
    expect(toWorkflowPath('../etc/passwd')).toBeNull();
    expect(toWorkflowPath('deploy.json')).toBeNull();
    expect(workflowPathFromRef('acme/api/.github/workflows/deploy.yml@refs/heads/main', 'acme/api')).toBe(
      '.github/workflows/deploy.yml',
    );
    expect(
      workflowPathFromRef('other/repo/.github/workflows/deploy.yml@refs/heads/main', 'acme/api'),
    ).toBeNull();
  });
});

describe('run summaries', () => {
  const workflowRuns = githubExamples('workflow_run');
  const completed = completedWorkflowRunExample();

  it("reads GitHub's workflow_run.completed example", () => {
    const parsed = parseWorkflowRun(completed);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const run = completed.workflow_run as Record<string, unknown>;
    const repository = completed.repository as Record<string, unknown>;
    expect(parsed.value.runId).toBe(run.id);
    expect(parsed.value.repositoryId).toBe(repository.id);
    expect(parsed.value.summary).toEqual({
      repository: repository.full_name,
      workflow: run.name,
      workflowPath: run.path,
      runId: String(run.id),
      runAttempt: run.run_attempt,
      runNumber: run.run_number,
      conclusion: run.conclusion,
      headBranch: run.head_branch,
      headSha: run.head_sha,
      actor: (run.actor as { login: string }).login,
      htmlUrl: run.html_url,
      completedAt: run.updated_at,
    });
  });

  it('falls back to the top-level workflow and sender of older payloads', () => {
    const older = workflowRuns.find(
      (e) => e.action === 'completed' && (e.workflow_run as { path?: unknown }).path === undefined,
    )!;
    const parsed = parseWorkflowRun(older);
    expect(parsed.ok && parsed.value.summary.workflowPath).toBe((older.workflow as { path: string }).path);
    expect(parsed.ok && parsed.value.summary.actor).toBe((older.sender as { login: string }).login);
  });

  it('says what is missing', () => {
    expect(parseWorkflowRun([])).toEqual({ ok: false, problem: 'the webhook body is not a JSON object' });
    expect(parseWorkflowRun({ repository: { id: 1, full_name: 'a/b' } })).toEqual({
      ok: false,
      problem: 'workflow_run is missing',
    });
    const noId = { ...completed, workflow_run: { ...(completed.workflow_run as object), id: 'x' } };
    expect(parseWorkflowRun(noId)).toEqual({
      ok: false,
      problem: 'workflow_run.id must be a positive integer',
    });
  });
});

describe('dispatch bodies', () => {
  const event = runSummary({ runId: '1', runNumber: 1 });
  const base = {
    eventType: 'deployed',
    correlationId: '1',
    deliveryId: 'delivery-0193a6f0-c1d2-7b3e-9f4a-8c2d1e0f5a6b',
    durable: false,
    isReplay: false,
    retry: 0,
    event,
    payloadUrl: 'https://zekt.example/api/deliveries/delivery-x/payload',
  };

  it('puts the message inline while the request stays under 64 KB, by reference beyond', () => {
    const small = buildDispatchBody({ ...base, message: { payload: { version: '1.2.3' } } });
    expect(small.byReference).toBe(false);
    expect(small.body.client_payload.zekt.payload).toEqual({ version: '1.2.3' });
    expect(Object.keys(small.body.client_payload)).toEqual(['zekt']);

    // Find the largest string that still fits, then one byte more.
    const overhead = buildDispatchBody({ ...base, message: { payload: '' } }).bytes;
    const fits = 'x'.repeat(DISPATCH_BODY_LIMIT_BYTES - overhead - 1);
    const atLimit = buildDispatchBody({ ...base, message: { payload: fits } });
    expect(atLimit.bytes).toBe(DISPATCH_BODY_LIMIT_BYTES - 1);
    expect(atLimit.byReference).toBe(false);
    const over = buildDispatchBody({ ...base, message: { payload: `${fits}x` } });
    expect(over.byReference).toBe(true);
    expect(over.body.client_payload.zekt.payload).toBeUndefined();
    expect(over.body.client_payload.zekt.payloadRef).toEqual({
      url: base.payloadUrl,
      bytes: fits.length + 3,
    });
    expect(over.bytes).toBeLessThan(DISPATCH_BODY_LIMIT_BYTES);
  });

  it('keeps the text it measured: what is sent is the body, and its bytes are the ones counted', () => {
    for (const message of [
      { payload: { version: '1.2.3', note: 'é ✓' } },
      { payload: 'x'.repeat(70_000) },
      undefined,
    ]) {
      const built = buildDispatchBody({ ...base, message });
      expect(JSON.parse(built.json)).toEqual(built.body);
      expect(Buffer.byteLength(built.json, 'utf8')).toBe(built.bytes);
    }
  });

  it('omits payload without a message and carries the token only when given', () => {
    const eventOnly = buildDispatchBody({ ...base, message: undefined });
    expect('payload' in eventOnly.body.client_payload.zekt).toBe(false);
    expect('token' in eventOnly.body.client_payload.zekt).toBe(false);
    const durable = buildDispatchBody({ ...base, durable: true, token: 'zdt_x', message: undefined });
    expect(durable.body.client_payload.zekt.token).toBe('zdt_x');
  });

  it('carries the schema version the message was checked against, with the message (inline or by reference)', () => {
    const checked = buildDispatchBody({ ...base, schemaVersion: 3, message: { payload: { v: 1 } } });
    expect(checked.body.client_payload.zekt.schemaVersion).toBe(3);
    const large = buildDispatchBody({
      ...base,
      schemaVersion: 3,
      message: { payload: 'x'.repeat(DISPATCH_BODY_LIMIT_BYTES) },
    });
    expect(large.byReference).toBe(true);
    expect(large.body.client_payload.zekt.schemaVersion).toBe(3);
    expect(
      'schemaVersion' in
        buildDispatchBody({ ...base, schemaVersion: null, message: { payload: 1 } }).body.client_payload.zekt,
    ).toBe(false);
    // No message, nothing was checked.
    expect(
      'schemaVersion' in
        buildDispatchBody({ ...base, schemaVersion: 3, message: undefined }).body.client_payload.zekt,
    ).toBe(false);
  });
});

describe('routing policy', () => {
  const subscription = (overrides: Partial<RoutableSubscription> = {}): RoutableSubscription => ({
    subscriptionId: 'sub_1',
    serviceId: 'svc_1',
    serviceEventType: 'svc-default',
    consumerAccountId: 2,
    consumerRepositoryId: 20,
    durable: false,
    completionTracking: false,
    schema: null,
    ...overrides,
  });

  it('blocks a workflow that is not whitelisted, whoever subscribed', () => {
    expect(
      decideRouting({ whitelisted: false, subscriptions: [subscription()], message: undefined }),
    ).toEqual({
      outcome: 'blocked',
      reason: 'workflow_not_whitelisted',
    });
  });

  it("uses the message's event type, else the service's; durable needs both switches", () => {
    const decision = decideRouting({
      whitelisted: true,
      subscriptions: [
        subscription(),
        subscription({ subscriptionId: 'sub_2', durable: true, completionTracking: true }),
        subscription({
          subscriptionId: 'sub_3',
          durable: true,
          completionTracking: false,
          serviceEventType: null,
        }),
      ],
      message: undefined,
    });
    expect(decision.outcome).toBe('routed');
    if (decision.outcome !== 'routed') return;
    expect(decision.deliveries.map((d) => [d.subscriptionId, d.eventType, d.durable])).toEqual([
      ['sub_1', 'svc-default', false],
      ['sub_2', 'svc-default', true],
      ['sub_3', 'zekt-workflow-completed', false],
    ]);
    const withMessage = decideRouting({
      whitelisted: true,
      subscriptions: [subscription()],
      message: { eventType: 'from-message' },
    });
    expect(withMessage.outcome === 'routed' && withMessage.deliveries[0]!.eventType).toBe('from-message');
  });
});

describe('error categories', () => {
  it('sorts failures the way diagnostics groups them', () => {
    expect(categorizeFailure({ status: 503 })).toBe('service_unavailable');
    expect(categorizeFailure({ status: 502 })).toBe('service_unavailable');
    expect(categorizeFailure({ status: 504 })).toBe('timeout');
    expect(categorizeFailure({ status: 401 })).toBe('auth');
    expect(categorizeFailure({ status: 403, message: 'Resource not accessible by integration' })).toBe(
      'auth',
    );
    expect(categorizeFailure({ status: 403, headers: { 'x-ratelimit-remaining': '0' } })).toBe(
      'rate_limited',
    );
    expect(
      categorizeFailure({
        status: 403,
        message: 'You have exceeded a secondary rate limit. Please wait a few minutes.',
      }),
    ).toBe('rate_limited');
    expect(categorizeFailure({ status: 429 })).toBe('rate_limited');
    expect(categorizeFailure({ status: 404 })).toBe('not_found');
    expect(categorizeFailure({ status: 422 })).toBe('rejected');
    expect(categorizeFailure({ errorCode: 'ECONNRESET' })).toBe('network');
    expect(categorizeFailure({ errorCode: 'ENOTFOUND' })).toBe('network');
    expect(categorizeFailure({ errorCode: 'TIMEOUT' })).toBe('timeout');
    expect(categorizeFailure({ status: 418 })).toBe('other');
    expect(categorizeFailure({})).toBe('other');
  });
});

describe('retry schedule', () => {
  const mid = () => 0.5;
  it('follows the schedule with ±20 % jitter and stops when it runs out', () => {
    expect(nextAttemptAt({ attemptsMade: 1, now: 0, random: mid })).toBe(10_000);
    expect(nextAttemptAt({ attemptsMade: 1, now: 0, random: () => 0 })).toBe(8_000);
    expect(nextAttemptAt({ attemptsMade: 1, now: 0, random: () => 0.999999 })).toBe(12_000);
    expect(nextAttemptAt({ attemptsMade: 2, now: 100, random: mid })).toBe(60_100);
    expect(nextAttemptAt({ attemptsMade: 8, now: 0, random: mid })).toBe(24 * 3_600_000);
    expect(nextAttemptAt({ attemptsMade: 9, now: 0, random: mid })).toBeNull();
  });

  it('honours Retry-After and x-ratelimit-reset when longer, capped at 24 h', () => {
    expect(nextAttemptAt({ attemptsMade: 1, now: 0, random: mid, headers: { 'retry-after': '120' } })).toBe(
      120_000,
    );
    expect(nextAttemptAt({ attemptsMade: 1, now: 0, random: mid, headers: { 'retry-after': '1' } })).toBe(
      10_000,
    );
    expect(
      nextAttemptAt({
        attemptsMade: 1,
        now: 1_000_000,
        random: mid,
        headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1300' },
      }),
    ).toBe(1_300_000);
    expect(
      nextAttemptAt({ attemptsMade: 1, now: 0, random: mid, headers: { 'retry-after': '999999' } }),
    ).toBe(24 * 3_600_000);
    expect(requestedDelayMs({ 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '99' }, 0)).toBeNull();
  });
});

describe('usage months', () => {
  it('are UTC calendar months', () => {
    expect(usageMonth(Date.UTC(2026, 10, 30, 23, 59))).toBe('2026-11');
    expect(usageMonth(Date.UTC(2026, 11, 1, 0, 0))).toBe('2026-12');
  });
});
