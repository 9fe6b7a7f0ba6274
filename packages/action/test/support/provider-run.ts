import type { WebhookDeliveryRecord } from 'zekt-github-sim';
import type { Harness } from '../../../../apps/server/test/support/harness.js';

/**
 * A provider workflow run that is still in progress while the action's step runs, as on GitHub:
 * the step sends the message, then the run completes and GitHub sends `workflow_run` `completed`.
 *
 * The simulator's `runWorkflow` creates and completes a run in one call, sending `completed` to the
 * repository's hooks. So the run is created while the provider repository has no hook (its provider
 * switch briefly off: nothing hears that completion), the switch goes back on (the hook is placed
 * again), and `complete()` sends the run's `completed` webhook, signed, through the new hook.
 * The step's environment (`ACTIONS_ID_TOKEN_REQUEST_*`, `GITHUB_*`) stays valid after the run.
 */
export interface ProviderRun {
  env: Record<string, string>;
  runId: number;
  complete(): Promise<WebhookDeliveryRecord[]>;
}

export async function startProviderRun(
  h: Harness,
  options: { providerToken: string; repository?: string; workflow?: string },
): Promise<ProviderRun> {
  const repository = options.repository ?? 'acme/api';
  const switchProvider = async (enabled: boolean) => {
    const answer = await h.call('PUT', `/api/v1/repositories/${repository}/provider`, {
      token: options.providerToken,
      body: { enabled },
    });
    if (answer.status !== 200) throw new Error(`provider switch: ${JSON.stringify(answer.body)}`);
  };
  await switchProvider(false);
  const { run, env, webhooks } = await h.sim.runWorkflow({
    repository,
    workflow: options.workflow ?? 'deploy.yml',
  });
  if (webhooks.length > 0) throw new Error('the run was heard before its step ran');
  await switchProvider(true);
  return {
    env,
    runId: run.id,
    complete: () =>
      h.sim.sendRepositoryWebhook(repository, 'workflow_run', {
        action: 'completed',
        workflow_run: run,
        repository: run.repository,
        sender: run.triggering_actor,
      }),
  };
}

/**
 * A run of a repository that is not a provider (no hook, provider switch off): its step's env is
 * real, and Zekt refuses its message with 404.
 */
export async function startUnregisteredRun(h: Harness, repository: string): Promise<Record<string, string>> {
  const { env } = await h.sim.runWorkflow({ repository, workflow: 'deploy.yml' });
  return env;
}
