import type { RunSummary } from '../../src/domain/run-summary.js';

/**
 * A completed run of acme/api's deploy workflow as the webhook ingestion summarises it (run 77
 * unless `overrides` say otherwise; its URL follows its run id).
 */
export function runSummary(overrides: Partial<RunSummary> = {}): RunSummary {
  const runId = overrides.runId ?? '77';
  return {
    repository: 'acme/api',
    workflow: 'Deploy',
    workflowPath: '.github/workflows/deploy.yml',
    runId,
    runAttempt: 1,
    runNumber: 3,
    conclusion: 'success',
    headBranch: 'main',
    headSha: 'a'.repeat(40),
    actor: 'alice',
    htmlUrl: `https://github.com/acme/api/actions/runs/${runId}`,
    completedAt: '2026-11-20T00:00:00Z',
    ...overrides,
  };
}
