/**
 * The `client_payload` both reference routers of `zekt bench --compare` dispatch (naive-router.ts,
 * bare-durable-router.ts): Zekt's envelope with the run's summary, so the simulator times each
 * dispatch by its run (`correlationId`) whichever router sent it.
 */
export interface CompletedRun {
  repository: { full_name: string };
  workflow_run: {
    id: number;
    name?: string | null;
    path: string;
    run_attempt?: number;
    run_number: number;
    conclusion: string | null;
    head_branch: string | null;
    head_sha: string;
    actor?: { login: string } | null;
    html_url: string;
    updated_at: string;
  };
}

export function runClientPayload(payload: CompletedRun): Record<string, unknown> {
  const run = payload.workflow_run;
  return {
    zekt: {
      version: 1,
      correlationId: String(run.id),
      event: {
        repository: payload.repository.full_name,
        workflow: run.name,
        workflowPath: run.path,
        runId: String(run.id),
        runAttempt: run.run_attempt,
        runNumber: run.run_number,
        conclusion: run.conclusion,
        headBranch: run.head_branch,
        headSha: run.head_sha,
        actor: run.actor?.login ?? null,
        htmlUrl: run.html_url,
        completedAt: run.updated_at,
      },
    },
  };
}
