import type { Clock } from './clock.js';
import type { FaultInjector } from './faults.js';
import type { IdSequences } from './ids.js';
import type { OidcIssuer } from './oidc-issuer.js';
import type { AppRecord, RepositoryRecord, SimState } from './sim-state.js';
import type { SimUrls } from './sim-urls.js';
import type { DispatchRecord, InstallationPermissions } from './types.js';
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
  /** Aborted when the simulator closes: pending waits and outgoing calls stop. */
  shutdown: AbortSignal;
  /** `SimulatorOptions.onDispatch`. */
  onDispatch: (dispatch: DispatchRecord) => void;
}

/** The permissions of the App, and of its installations unless an installation says otherwise. */
export const DEFAULT_PERMISSIONS: InstallationPermissions = {
  metadata: 'read',
  contents: 'write',
  actions: 'read',
  repository_hooks: 'write',
};

/**
 * What an accepted `repository_dispatch` starts in the consumer repository: the runs it creates
 * now and a function that starts them once the 204 has gone out. Declared here, not imported from
 * consumer-workflows.ts, because that module takes this context.
 */
export interface DispatchReactions {
  onDispatch(ctx: SimContext, dispatch: DispatchRecord, repo: RepositoryRecord): () => void;
}
