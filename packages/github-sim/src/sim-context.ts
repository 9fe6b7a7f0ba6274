import type { Clock } from './clock.js';
import type { FaultInjector } from './faults.js';
import type { IdSequences } from './ids.js';
import type { OidcIssuer } from './oidc-issuer.js';
import type { AppRecord, RepositoryRecord, SimState } from './sim-state.js';
import type { SimUrls } from './sim-urls.js';
import type { DispatchRecord, InstallationPermissions, WorkflowDispatchRecord } from './types.js';
import type { WebhookDrops } from './webhook-drops.js';
import type { WebhookSender } from './webhook-sender.js';

/** Everything the simulator's operations and HTTP handlers share. */
export interface SimContext {
  state: SimState;
  ids: IdSequences;
  clock: Clock;
  /**
   * The App the simulator starts with (`SimulatorOptions.app`, `sim.app`); Apps registered from a
   * manifest are in `state.apps` beside it.
   */
  app: AppRecord;
  /** Filled in once the server listens. */
  urls: SimUrls;
  allowPrivateHookUrls: boolean;
  oidc: OidcIssuer;
  webhooks: WebhookSender;
  /** Webhook drop rules (`dropWebhooks`). */
  webhookDrops: WebhookDrops;
  /** Fault rules applied to REST requests (`injectFaults`). */
  faults: FaultInjector;
  /** Consumer workflows and their runs (`defineConsumerWorkflow`, consumer-workflows.ts). */
  consumerWorkflows: DispatchReactions;
  /**
   * The GitHub Enterprise Server version the simulator answers as (`setGhesVersion`), or null for
   * github.com. 3.20 and older refuse `return_run_details` on `workflow_dispatch` and take at most
   * 10 inputs.
   */
  ghesVersion: string | null;
  /** Aborted when the simulator closes: pending waits and outgoing calls stop. */
  shutdown: AbortSignal;
  /** `SimulatorOptions.onDispatch`. */
  onDispatch: (dispatch: DispatchRecord) => void;
}

/** The permissions of the App, and of its installations unless an installation says otherwise. */
export const DEFAULT_PERMISSIONS: InstallationPermissions = {
  metadata: 'read',
  contents: 'write',
  // Zekt's App asks for Actions: write, which `workflow_dispatch` needs (and reading runs).
  actions: 'write',
  repository_hooks: 'write',
};

/** A consumer workflow as a `workflow_dispatch` sees it: its file and whether (and how) it can be dispatched. */
export interface DispatchableWorkflow {
  workflow: string;
  workflowDispatch: { inputs: Record<string, { required?: boolean; default?: string }> } | null;
}

/**
 * What an accepted dispatch starts in the consumer repository: the runs it creates now and a
 * function that starts them once the answer has gone out. Declared here, not imported from
 * consumer-workflows.ts, because that module takes this context.
 */
export interface DispatchReactions {
  onDispatch(ctx: SimContext, dispatch: DispatchRecord, repo: RepositoryRecord): () => void;
  /** The workflow a `workflow_dispatch` names (file name or id), or undefined. */
  find(ctx: SimContext, repo: RepositoryRecord, workflowId: string): DispatchableWorkflow | undefined;
  onWorkflowDispatch(
    ctx: SimContext,
    workflow: DispatchableWorkflow,
    dispatch: Omit<WorkflowDispatchRecord, 'runId'>,
    repo: RepositoryRecord,
  ): { runId: number; start: () => void };
}
