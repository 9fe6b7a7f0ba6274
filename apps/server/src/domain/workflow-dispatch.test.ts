import { describe, expect, it } from 'vitest';
import {
  buildWorkflowInputs,
  refusedRunDetails,
  WORKFLOW_INPUTS_LIMIT_CHARACTERS,
  workflowDispatchBody,
} from './client-payload.js';
import { decideDeliveryRoute, deliveryRouteOf, isValidRef, tracksRuns } from './delivery-mode.js';
import { emptyCategories, recommend } from './diagnostics.js';
import { awaitsStart } from './not-started.js';
import { decideRouting } from './routing.js';
import {
  followExpired,
  followsRun,
  nextRunReadAt,
  RUN_FOLLOW_MAX_MS,
  reportOfRun,
  runFailureReason,
} from './run-following.js';
import type { RunSummary } from './run-summary.js';

describe('delivery modes', () => {
  const repositoryDispatch = { mode: 'repository_dispatch' } as const;
  const onZekt = { mode: 'workflow_dispatch', workflow: 'on-zekt.yml', ref: null } as const;

  it('switches to workflow_dispatch with a workflow file name or path, and a ref', () => {
    expect(
      decideDeliveryRoute(repositoryDispatch, { deliveryMode: 'workflow_dispatch', workflow: 'on-zekt.yml' }),
    ).toEqual({ ok: true, route: onZekt });
    expect(
      decideDeliveryRoute(repositoryDispatch, {
        deliveryMode: 'workflow_dispatch',
        workflow: '.github/workflows/on-zekt.yaml',
        ref: 'release/v2',
      }),
    ).toEqual({
      ok: true,
      route: { mode: 'workflow_dispatch', workflow: 'on-zekt.yaml', ref: 'release/v2' },
    });
    // Changing only the ref keeps the workflow; null or '' is the default branch again.
    expect(decideDeliveryRoute(onZekt, { ref: 'refs/tags/v1' })).toEqual({
      ok: true,
      route: { ...onZekt, ref: 'refs/tags/v1' },
    });
    expect(decideDeliveryRoute({ ...onZekt, ref: 'dev' }, { ref: '' })).toEqual({ ok: true, route: onZekt });
    // Back to repository_dispatch forgets both.
    expect(decideDeliveryRoute(onZekt, { deliveryMode: 'repository_dispatch' })).toEqual({
      ok: true,
      route: repositoryDispatch,
    });
  });

  it.each([
    [{ deliveryMode: 'workflow_dispatch' as const }, 'invalid_request', 'needs the workflow'],
    [
      { deliveryMode: 'workflow_dispatch' as const, workflow: '../secrets.yml' },
      'invalid_workflow_file',
      'file name',
    ],
    [
      { deliveryMode: 'workflow_dispatch' as const, workflow: 'deploy.json' },
      'invalid_workflow_file',
      'e.g. on-deploy.yml',
    ],
    [
      { deliveryMode: 'workflow_dispatch' as const, workflow: 'a.yml', ref: 'main..dev' },
      'invalid_ref',
      'branch or tag',
    ],
    [{ workflow: 'a.yml' }, 'invalid_request', 'workflow_dispatch only'],
    [
      { deliveryMode: 'repository_dispatch' as const, ref: 'main' },
      'invalid_request',
      'workflow_dispatch only',
    ],
  ])('refuses %j: %s', (change, code, words) => {
    const decision = decideDeliveryRoute(repositoryDispatch, change);
    expect(decision.ok).toBe(false);
    if (decision.ok) return;
    expect(decision.code).toBe(code);
    expect(decision.detail).toContain(words);
  });

  it('checks refs by git’s rules', () => {
    for (const ref of ['main', 'release/v2', 'v1.2.3', 'refs/heads/main', 'feature_x-y', 'a'.repeat(255)]) {
      expect(isValidRef(ref), ref).toBe(true);
    }
    for (const ref of [
      '',
      'has space',
      'a..b',
      'a@{1}',
      '@',
      '/main',
      'main/',
      'main.',
      '.hidden',
      'x/.y',
      'b.lock',
      'a:b',
      'a~1',
      'a^',
      'a?',
      'a*',
      'a[b',
      'a\\b',
      'a//b',
      '-x',
      'tab\there',
      'a'.repeat(256),
      42,
      null,
    ]) {
      expect(isValidRef(ref), String(ref)).toBe(false);
    }
  });

  it('reads a stored route, and says when runs can be tracked without COMPLETION', () => {
    expect(deliveryRouteOf({ mode: 'workflow_dispatch', workflow: 'a.yml', ref: 'dev' })).toEqual({
      mode: 'workflow_dispatch',
      workflow: 'a.yml',
      ref: 'dev',
    });
    expect(deliveryRouteOf({ mode: 'repository_dispatch', workflow: null, ref: null })).toEqual(
      repositoryDispatch,
    );
    expect(tracksRuns({ mode: 'repository_dispatch', completionTracking: false })).toBe(false);
    expect(tracksRuns({ mode: 'repository_dispatch', completionTracking: true })).toBe(true);
    expect(tracksRuns({ mode: 'workflow_dispatch', completionTracking: false })).toBe(true);
  });

  it('routes durable deliveries of a workflow_dispatch subscription without COMPLETION', () => {
    const decision = decideRouting({
      whitelisted: true,
      subscriptions: [
        {
          subscriptionId: 'sub_1',
          serviceId: 'svc',
          serviceEventType: 'go',
          consumerAccountId: 1,
          consumerRepositoryId: 1,
          durable: true,
          completionTracking: false,
          deliveryMode: 'workflow_dispatch',
          schema: null,
        },
        {
          subscriptionId: 'sub_2',
          serviceId: 'svc',
          serviceEventType: 'go',
          consumerAccountId: 1,
          consumerRepositoryId: 2,
          durable: true,
          completionTracking: false,
          deliveryMode: 'repository_dispatch',
          schema: null,
        },
      ],
      message: undefined,
    });
    expect(decision.outcome === 'routed' && decision.deliveries.map((d) => d.durable)).toEqual([true, false]);
  });
});

describe('the zekt input of a workflow_dispatch', () => {
  const event: RunSummary = {
    repository: 'acme/api',
    workflow: 'Deploy',
    workflowPath: '.github/workflows/deploy.yml',
    runId: '1',
    runAttempt: 1,
    runNumber: 1,
    conclusion: 'success',
    headBranch: 'main',
    headSha: 'abc',
    actor: 'octocat',
    htmlUrl: 'https://github.com/acme/api/actions/runs/1',
    completedAt: '2026-01-01T00:00:00Z',
  };
  const base = {
    eventType: 'deployed',
    correlationId: '1',
    deliveryId: 'delivery-0193a6f0-c1d2-7b3e-9f4a-8c2d1e0f5a6b',
    durable: true,
    isReplay: false,
    retry: 0,
    token: 'zdt_x',
    event,
    payloadUrl: 'https://zekt.example/api/deliveries/delivery-x/payload',
  };

  it('carries the client payload’s zekt object as one JSON text input, and asks for the run', () => {
    const built = buildWorkflowInputs({ ...base, message: { payload: { version: '1.2.3' } } });
    expect(built.byReference).toBe(false);
    expect(Object.keys(built.inputs)).toEqual(['zekt']);
    expect(JSON.parse(built.inputs.zekt)).toEqual({
      version: 1,
      correlationId: '1',
      deliveryId: base.deliveryId,
      durable: true,
      isReplay: false,
      retry: 0,
      token: 'zdt_x',
      event,
      payload: { version: '1.2.3' },
    });
    expect(workflowDispatchBody('main', built.inputs, true)).toEqual({
      ref: 'main',
      inputs: built.inputs,
      return_run_details: true,
    });
    expect(workflowDispatchBody('dev', built.inputs, false)).toEqual({ ref: 'dev', inputs: built.inputs });
  });

  it('tells GitHub Enterprise Server’s refusal of return_run_details from other 422s', () => {
    expect(
      refusedRunDetails({
        status: 422,
        message: 'Invalid request.\n\n"return_run_details" is not a permitted key.',
      }),
    ).toBe(true);
    expect(refusedRunDetails({ status: 422, message: 'Unexpected inputs provided: ["zekt"]' })).toBe(false);
    expect(refusedRunDetails({ status: 403, message: 'return_run_details' })).toBe(false);
  });

  it('sends the message by reference when the inputs would pass 65,535 characters', () => {
    // Quotes are escaped twice over (a JSON text inside JSON): count what GitHub counts.
    const overhead = buildWorkflowInputs({ ...base, message: { payload: '' } }).inputCharacters;
    const fits = 'x'.repeat(WORKFLOW_INPUTS_LIMIT_CHARACTERS - overhead);
    const atLimit = buildWorkflowInputs({ ...base, message: { payload: fits } });
    expect(atLimit.inputCharacters).toBe(WORKFLOW_INPUTS_LIMIT_CHARACTERS);
    expect(atLimit.byReference).toBe(false);
    const over = buildWorkflowInputs({ ...base, message: { payload: `${fits}x` } });
    expect(over.byReference).toBe(true);
    const zekt = JSON.parse(over.inputs.zekt);
    expect(zekt.payload).toBeUndefined();
    expect(zekt.payloadRef).toEqual({ url: base.payloadUrl, bytes: fits.length + 3 });
    // A message GitHub's 64 KB repository_dispatch limit would take whole may not fit the input.
    const quoted = buildWorkflowInputs({ ...base, message: { payload: '"'.repeat(20_000) } });
    expect(quoted.byReference).toBe(true);
  });
});

describe('following a consumer run', () => {
  it('reads on a backing-off schedule whose last delay repeats, with jitter, and waits as GitHub asks', () => {
    const half = () => 0.5;
    expect(
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 50].map((reads) => nextRunReadAt({ reads, now: 0, random: half })),
    ).toEqual([5_000, 10_000, 15_000, 20_000, 60_000, 120_000, 300_000, 900_000, 900_000, 900_000]);
    expect(nextRunReadAt({ reads: 0, now: 0, random: () => 0 })).toBe(4_000);
    expect(nextRunReadAt({ reads: 0, now: 0, random: () => 0.9999999 })).toBe(6_000);
    expect(nextRunReadAt({ reads: 1, now: 100, schedule: [200, 400], random: half })).toBe(500);
    expect(nextRunReadAt({ reads: 0, now: 0, random: half, headers: { 'retry-after': '60' } })).toBe(60_000);
  });

  it('follows a named run of a durable delivery without COMPLETION, and never waits for it to start', () => {
    expect(followsRun({ durable: true, runKnown: true, completionTracking: false })).toBe(true);
    expect(followsRun({ durable: true, runKnown: true, completionTracking: true })).toBe(false);
    expect(followsRun({ durable: false, runKnown: true, completionTracking: false })).toBe(false);
    expect(followsRun({ durable: true, runKnown: false, completionTracking: false })).toBe(false);
    expect(awaitsStart({ durable: true, runKnown: true })).toBe(false);
    expect(awaitsStart({ durable: true, runKnown: false })).toBe(true);
  });

  it('confirms once the run left the queue, completes from its conclusion, fails a deleted run', () => {
    expect(reportOfRun({ found: true, status: 'queued', conclusion: null })).toEqual({ kind: 'none' });
    expect(reportOfRun({ found: true, status: 'requested', conclusion: null })).toEqual({ kind: 'none' });
    expect(reportOfRun({ found: true, status: 'pending', conclusion: null })).toEqual({ kind: 'none' });
    expect(reportOfRun({ found: true, status: 'in_progress', conclusion: null })).toEqual({
      kind: 'confirm',
    });
    expect(reportOfRun({ found: true, status: 'waiting', conclusion: null })).toEqual({ kind: 'confirm' });
    expect(reportOfRun({ found: true, status: 'completed', conclusion: 'success' })).toEqual({
      kind: 'complete',
      success: true,
    });
    expect(reportOfRun({ found: true, status: 'completed', conclusion: 'cancelled' })).toEqual({
      kind: 'complete',
      success: false,
      failureReason: 'consumer_run_cancelled',
    });
    expect(reportOfRun({ found: false })).toEqual({
      kind: 'complete',
      success: false,
      failureReason: 'consumer_run_deleted',
    });
    expect(runFailureReason('startup_failure')).toBe('consumer_run_startup_failure');
    expect(runFailureReason('x y!')).toBe('consumer_run_x_y_');
    expect(followExpired(0, RUN_FOLLOW_MAX_MS - 1)).toBe(false);
    expect(followExpired(0, RUN_FOLLOW_MAX_MS)).toBe(true);
  });
});

describe('diagnostics of a workflow_dispatch connection', () => {
  const counts = { ...emptyCategories(), auth: 1, not_found: 1, rejected: 1 };
  const texts = (route?: Parameters<typeof recommend>[0]['route']) =>
    Object.fromEntries(
      recommend({
        consumerAccount: 'globex',
        consumerRepository: 'globex/app',
        counts,
        durable: true,
        route,
      }).map((r) => [r.category, r.text]),
    );

  it('name the permission, the workflow file and the trigger it needs', () => {
    const workflow = texts({ mode: 'workflow_dispatch', workflow: 'on-zekt.yml', ref: null });
    expect(workflow.auth).toContain('"Actions: read & write"');
    expect(workflow.auth).toContain("accepts the App's new permissions in the installation's settings");
    expect(workflow.not_found).toContain('.github/workflows/on-zekt.yml on the default branch');
    expect(workflow.rejected).toContain('on: workflow_dispatch: inputs: zekt');
    const repository = texts();
    expect(repository.auth).toContain('"Contents: read & write"');
    expect(repository.not_found).not.toContain('on-zekt.yml');
  });
});
