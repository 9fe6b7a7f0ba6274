import type { AppIdentity } from './app-identity.js';
import type { Clock } from './clock.js';
import type { ConsumerWorkflows } from './consumer-workflows.js';
import type { FaultInjector } from './faults.js';
import type { IdSequences } from './ids.js';
import { OIDC_ISSUER_PATH, type OidcIssuer } from './oidc-issuer.js';
import type { AccountRecord, SimState } from './sim-state.js';
import type { SimUrls } from './sim-urls.js';
import type { DispatchRecord, InstallationPermissions } from './types.js';
import type { WebhookDrops } from './webhook-drops.js';
import type { WebhookSender } from './webhook-sender.js';

/** Everything the simulator's operations and HTTP handlers share. */
export interface SimContext {
  state: SimState;
  ids: IdSequences;
  clock: Clock;
  app: AppIdentity;
  /** The organisation that owns the App (`owner` of `GET /app`). */
  appOwner: AccountRecord;
  /** The App's bot user (`<slug>[bot]`), the sender of what the App does. */
  appBot: AccountRecord;
  /** Filled in once the server listens. */
  urls: SimUrls;
  allowPrivateHookUrls: boolean;
  oidc: OidcIssuer;
  webhooks: WebhookSender;
  /** Webhook drop rules (`dropWebhooks`). */
  webhookDrops: WebhookDrops;
  /** Fault rules applied to REST requests (`injectFaults`). */
  faults: FaultInjector;
  /** Consumer workflows and their runs (`defineConsumerWorkflow`). */
  consumerWorkflows: ConsumerWorkflows;
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

/** The issuer URL of Actions OIDC tokens: `<url>/_services/token`, like GHES. */
export function oidcIssuerUrl(ctx: SimContext): string {
  return `${ctx.urls.base}${OIDC_ISSUER_PATH}`;
}
