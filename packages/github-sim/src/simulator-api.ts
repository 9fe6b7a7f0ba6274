import type { AppOptions } from './app-identity.js';
import type { Clock } from './clock.js';
import type {
  ConsumerRunRecord,
  ConsumerWorkflowInput,
  CreateInstallationInput,
  DispatchRecord,
  FaultRule,
  FaultRuleStatus,
  InstallationChange,
  JournalEntry,
  MintOidcTokenInput,
  RerunWorkflowInput,
  RunWorkflowInput,
  RunWorkflowResult,
  SimulatedApp,
  WebhookDeliveryRecord,
  WebhookDropRule,
  WebhookDropRuleStatus,
  WorkflowDispatchRecord,
} from './types.js';

// The simulator's public interface, apart from the module that builds it, so its HTTP routes can
// take the simulator without importing the module that registers them.

export interface SimulatorOptions {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  app?: AppOptions;
  /**
   * Default false, like github.com: hooks on localhost/private addresses are refused. True behaves
   * like GitHub Enterprise Server on a private network.
   */
  allowPrivateHookUrls?: boolean;
  /** Default: real time. Drives JWT and token expiry checks and every timestamp. */
  clock?: Clock;
  /** Lifetime of Actions OIDC tokens; default 300 s, like GitHub's. */
  oidcTokenLifetimeSeconds?: number;
  /**
   * The PEM RSA private key Actions OIDC tokens are signed with; default a key generated at start.
   * Tests that start many simulators pass one, as generating an RSA key takes a while.
   */
  oidcSigningKeyPem?: string;
  /**
   * Answer as this GitHub Enterprise Server version (e.g. `3.20`) instead of github.com; default
   * null. 3.20 and older refuse `return_run_details` on `workflow_dispatch` (422) and take at most
   * 10 inputs.
   */
  ghesVersion?: string | null;
  /**
   * Called as each accepted `repository_dispatch` is recorded, before the 204 goes out: a load test
   * times deliveries here (`dispatches()` only has GitHub's one-second timestamps).
   */
  onDispatch?: (dispatch: DispatchRecord) => void;
}

export interface GitHubSimulator {
  /** e.g. `http://127.0.0.1:43121` */
  readonly url: string;
  /** `url + '/api/v3'`: Octokit's `baseUrl`. */
  readonly apiUrl: string;
  /** `url + '/_services/token'`: the Actions OIDC issuer (GHES layout). */
  readonly oidcIssuer: string;
  /** The App's credentials and settings (a snapshot; read it again after changes). */
  readonly app: SimulatedApp;
  /**
   * Every App: the one the simulator started with, then those registered from a manifest
   * (`/settings/apps/new`), in the order they were created.
   */
  apps(): SimulatedApp[];
  /** Points the App the simulator started with at a webhook URL (null: no App webhook). */
  setAppWebhookUrl(url: string | null): void;
  /** Installs an App (`input.app`, default the App the simulator started with) on an account. */
  createInstallation(input: CreateInstallationInput): Promise<InstallationChange>;
  addRepositories(installationId: number, names: string[]): Promise<InstallationChange>;
  removeRepositories(installationId: number, fullNames: string[]): Promise<InstallationChange>;
  deleteInstallation(installationId: number): Promise<InstallationChange>;
  /**
   * Makes the user a member of the organisation (which must exist, e.g. as an installation's
   * account), so `GET /user/installations` lists its installation for them. The user is created
   * when unknown. Whoever installed the App on an organisation is a member from the start.
   */
  addOrgMember(org: string, login: string): void;
  /** Ends the membership: the organisation's installation is no longer listed for the user. */
  removeOrgMember(org: string, login: string): void;
  /**
   * Renames a user or organisation; it keeps its id. The old login is free at once: using it again
   * creates another account with a new id, as GitHub recycles logins.
   */
  renameAccount(login: string, newLogin: string): void;
  /**
   * Signs a user in to the simulated github.com "in the browser" (created when unknown), or signs
   * out with null: `/login/oauth/authorize` then authorizes that user at once, as GitHub does for a
   * signed-in user who authorized the App before. The authorize URL's `login` parameter wins.
   */
  signIn(login: string | null): void;
  runWorkflow(input: RunWorkflowInput): Promise<RunWorkflowResult>;
  rerunWorkflow(repository: string, runId: number, input?: RerunWorkflowInput): Promise<RunWorkflowResult>;
  mintOidcToken(input: MintOidcTokenInput): Promise<string>;
  /**
   * Sends any event, signed, to the repository's hooks that subscribed to it (e.g. a hand-made
   * `workflow_run` or a `push`); resolves with one delivery per hook.
   */
  sendRepositoryWebhook(
    repository: string,
    event: string,
    payload: unknown,
  ): Promise<WebhookDeliveryRecord[]>;
  dispatches(filter?: { repository?: string }): DispatchRecord[];
  /** Accepted `workflow_dispatch` calls, in order, with the run each created. */
  workflowDispatches(filter?: { repository?: string }): WorkflowDispatchRecord[];
  /** Answer as a GitHub Enterprise Server version from now on (`'3.20'`), or as github.com (null). */
  setGhesVersion(version: string | null): void;
  journal(): JournalEntry[];
  clearJournal(): void;
  webhookDeliveries(): WebhookDeliveryRecord[];
  /**
   * Sends a delivery again under its GUID (GitHub's *Redeliver*). A GUID is the event's, shared by
   * every hook that received it: name the hook when it went to several.
   * @example sim.redeliver(run.webhooks[0].guid, { hookId: run.webhooks[0].hookId })
   */
  redeliver(guid: string, options?: { hookId?: number }): Promise<WebhookDeliveryRecord>;
  /**
   * Fails the next matching webhook deliveries without sending them (a receiver that was down):
   * recorded as failed, listed by `GET …/hooks/{hook_id}/deliveries`, never retried by themselves.
   * @example sim.dropWebhooks({ event: 'workflow_run', repository: 'acme/api' })
   */
  dropWebhooks(rule: WebhookDropRule): { id: string };
  /** Removes one drop rule, or all of them. */
  clearWebhookDrops(id?: string): void;
  /** The drop rules, with how many deliveries each still drops. */
  webhookDrops(): WebhookDropRuleStatus[];
  /**
   * Adds a fault rule for REST requests (see `FaultRule`); rules apply in the order they were added.
   * @example sim.injectFaults({ path: '/repos/acme/app/dispatches', faults: [{ kind: 'status', status: 503 }] })
   */
  injectFaults(rule: FaultRule): { id: string };
  /** Removes one fault rule, or all of them. */
  clearFaults(id?: string): void;
  /** The fault rules, with how many faults each has left. */
  faults(): FaultRuleStatus[];
  /**
   * Stops accepting connections on the port (clients get "connection refused"); requests in flight
   * finish. With `forMs`, resumes by itself after that long.
   */
  suspend(options?: { forMs?: number }): Promise<void>;
  /** Accepts connections again, on the same port. */
  resume(): Promise<void>;
  /** Declares a consumer repository's workflow that `repository_dispatch` or `workflow_dispatch` starts. */
  defineConsumerWorkflow(input: ConsumerWorkflowInput): { id: string };
  /** Later dispatches no longer start it; started runs carry on. */
  removeConsumerWorkflow(id: string): void;
  /** Runs of consumer workflows, in the order they were created (one per started run). */
  consumerRuns(filter?: { repository?: string }): ConsumerRunRecord[];
  /** Stops everything: pending consumer runs and webhook deliveries are aborted, then the server closes. */
  close(): Promise<void>;
}
