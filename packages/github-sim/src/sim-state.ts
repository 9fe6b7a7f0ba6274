import type { AppIdentity } from './app-identity.js';
import type { Clock } from './clock.js';
import { type IdSequences, legacyNodeId } from './ids.js';
import type {
  DispatchRecord,
  InstallationPermissions,
  JournalEntry,
  WebhookDeliveryRecord,
  WorkflowConclusion,
  WorkflowDispatchRecord,
} from './types.js';

/** A GitHub user, organisation or bot the simulator knows. */
export interface AccountRecord {
  id: number;
  nodeId: string;
  login: string;
  type: 'User' | 'Organization' | 'Bot';
  /** When the simulator first saw the account: its `created_at`. */
  createdAt: Date;
}

/**
 * A GitHub App the simulator knows: the one it starts with (`SimulatorOptions.app`) and every App
 * registered from a manifest. Each has its own credentials, owner, bot, hook and installations.
 */
export interface AppRecord extends AppIdentity {
  /** The user or organisation that owns the App (`owner` of `GET /app`). */
  owner: AccountRecord;
  /** The App's bot user (`<slug>[bot]`), the sender of what the App does. */
  bot: AccountRecord;
  /** What the App asks of the accounts that install it. */
  permissions: InstallationPermissions;
  /** A public App can be installed on any account; a private one only on its owner's. */
  public: boolean;
  /** Where GitHub sends the browser after an installation (`setup_url`), with `installation_id` and `setup_action`. */
  setupUrl: string | null;
  /** The App's homepage (`external_url`); null: the owner's page. */
  externalUrl: string | null;
  description: string | null;
}

export interface RepositoryRecord {
  id: number;
  nodeId: string;
  name: string;
  owner: AccountRecord;
  private: boolean;
  defaultBranch: string;
  createdAt: Date;
  /** The installations (one per App at most) that currently include it. */
  installationIds: number[];
}

export interface InstallationRecord {
  id: number;
  /** The App installed. */
  appId: number;
  account: AccountRecord;
  /** The user who installed the App: the `sender` of the installation's events. */
  sender: AccountRecord;
  /** Repository ids in the order they were added. */
  repositoryIds: number[];
  permissions: InstallationPermissions;
  events: string[];
  createdAt: Date;
  updatedAt: Date;
  deleted: boolean;
}

export interface InstallationTokenRecord {
  token: string;
  installationId: number;
  expiresAt: Date;
  permissions: InstallationPermissions;
  /** Set when the token was narrowed to some repositories at creation. */
  repositoryIds: number[] | null;
}

export interface HookConfig {
  url: string;
  content_type: string;
  insecure_ssl: string;
  secret?: string;
}

export interface HookRecord {
  id: number;
  repositoryId: number;
  active: boolean;
  events: string[];
  config: HookConfig;
  createdAt: Date;
  updatedAt: Date;
  lastResponse: { code: number | null; status: string; message: string | null };
}

export interface WorkflowRecord {
  id: number;
  nodeId: string;
  repositoryId: number;
  /** e.g. `.github/workflows/deploy.yml` */
  path: string;
  name: string;
  createdAt: Date;
  runCount: number;
}

export interface RunRecord {
  id: number;
  nodeId: string;
  repositoryId: number;
  workflowId: number;
  runNumber: number;
  attempt: number;
  displayTitle: string;
  event: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: WorkflowConclusion | null;
  actor: AccountRecord;
  triggeringActor: AccountRecord;
  /** Who wrote the head commit, when not the actor (a dispatch's actor is the App's bot). */
  headCommitAuthor?: AccountRecord;
  headBranch: string;
  headSha: string;
  treeSha: string;
  checkSuiteId: number;
  checkSuiteNodeId: string;
  createdAt: Date;
  updatedAt: Date;
  runStartedAt: Date;
}

/** A one-time code from `/login/oauth/authorize`, exchanged at `/login/oauth/access_token`. */
export interface AuthorizationCodeRecord {
  code: string;
  clientId: string;
  /** Where the browser was sent with the code. */
  redirectUri: string;
  /**
   * Whether the authorize request named `redirect_uri` (else the App's first callback URL was
   * used): only then must the exchange repeat it.
   */
  redirectUriRequested: boolean;
  user: AccountRecord;
  expiresAt: Date;
}

/** A GitHub App user access token (`ghu_…`) and the refresh token issued with it. */
export interface UserTokenRecord {
  token: string;
  /** The App the user authorized: the token lists that App's installations. */
  appId: number;
  user: AccountRecord;
  expiresAt: Date;
  refreshToken: string;
  refreshTokenExpiresAt: Date;
}

/** The per-attempt `ACTIONS_ID_TOKEN_REQUEST_TOKEN` of a run, and what its OIDC tokens say. */
export interface RuntimeTokenRecord {
  token: string;
  runId: number;
  attempt: number;
}

/**
 * A temporary code of the manifest flow: GitHub sends the browser back to the manifest's
 * `redirect_url` with it, and `POST /app-manifests/{code}/conversions` trades it, once, within an
 * hour, for the App's credentials.
 */
export interface ManifestCodeRecord {
  code: string;
  appId: number;
  expiresAt: Date;
}

/** All in-memory state of one simulator. Nothing is persisted. */
export class SimState {
  /** Every App, by id. */
  readonly apps = new Map<number, AppRecord>();
  readonly manifestCodes = new Map<string, ManifestCodeRecord>();
  readonly accounts = new Map<string, AccountRecord>();
  readonly repositories = new Map<number, RepositoryRecord>();
  readonly installations = new Map<number, InstallationRecord>();
  readonly installationTokens = new Map<string, InstallationTokenRecord>();
  readonly hooks = new Map<number, HookRecord>();
  readonly workflows = new Map<number, WorkflowRecord>();
  readonly runs = new Map<number, RunRecord>();
  readonly runtimeTokens = new Map<string, RuntimeTokenRecord>();
  /** Organisation account id → ids of its member users. */
  readonly orgMembers = new Map<number, Set<number>>();
  readonly authorizationCodes = new Map<string, AuthorizationCodeRecord>();
  readonly userTokens = new Map<string, UserTokenRecord>();
  /** Who is signed in to the simulated github.com in "the browser" (`signIn`), if anyone. */
  signedInUser: AccountRecord | null = null;
  readonly dispatches: DispatchRecord[] = [];
  readonly workflowDispatches: WorkflowDispatchRecord[] = [];
  readonly journal: JournalEntry[] = [];
  readonly deliveries: WebhookDeliveryRecord[] = [];
  private journalSeq = 1;

  constructor(
    readonly ids: IdSequences,
    readonly clock: Clock,
  ) {}

  nextJournalId(): number {
    return this.journalSeq++;
  }

  /** Finds an account by login (case-insensitive, like GitHub) or creates it. */
  getOrCreateAccount(login: string, type: AccountRecord['type']): AccountRecord {
    const key = login.toLowerCase();
    const existing = this.accounts.get(key);
    if (existing !== undefined) return existing;
    const id = this.ids.account();
    const account: AccountRecord = {
      id,
      nodeId: legacyNodeId(type === 'Organization' ? 'Organization' : type === 'Bot' ? 'Bot' : 'User', id),
      login,
      type,
      createdAt: this.clock.now(),
    };
    this.accounts.set(key, account);
    return account;
  }

  /** Finds a repository by owner and name, case-insensitively. */
  findRepository(owner: string, name: string): RepositoryRecord | undefined {
    const o = owner.toLowerCase();
    const n = name.toLowerCase();
    for (const repo of this.repositories.values()) {
      if (repo.owner.login.toLowerCase() === o && repo.name.toLowerCase() === n) return repo;
    }
    return undefined;
  }

  /** Finds a repository by `owner/name`. */
  findRepositoryByFullName(fullName: string): RepositoryRecord | undefined {
    const [owner, name, ...rest] = fullName.split('/');
    if (owner === undefined || name === undefined || rest.length > 0) return undefined;
    return this.findRepository(owner, name);
  }

  /** The live (not deleted) installation of the App on an account, if any. */
  findInstallationOfAccount(accountId: number, appId: number): InstallationRecord | undefined {
    for (const installation of this.installations.values()) {
      if (!installation.deleted && installation.account.id === accountId && installation.appId === appId)
        return installation;
    }
    return undefined;
  }

  liveInstallation(id: number): InstallationRecord | undefined {
    const installation = this.installations.get(id);
    return installation === undefined || installation.deleted ? undefined : installation;
  }

  /** The live installations that include this repository, one per App. */
  installationsOfRepository(repo: RepositoryRecord): InstallationRecord[] {
    return repo.installationIds
      .map((id) => this.liveInstallation(id))
      .filter((installation): installation is InstallationRecord => installation !== undefined);
  }

  /** The live installation that includes this repository: the App's, or without an App the first one. */
  installationOfRepository(repo: RepositoryRecord, appId?: number): InstallationRecord | undefined {
    return this.installationsOfRepository(repo).find(
      (installation) => appId === undefined || installation.appId === appId,
    );
  }

  /** The App of an installation (every installation has one). */
  appOf(installation: InstallationRecord): AppRecord {
    const app = this.apps.get(installation.appId);
    if (app === undefined) throw new Error(`installation ${installation.id} names no known App`);
    return app;
  }

  findAppBySlug(slug: string): AppRecord | undefined {
    const wanted = slug.toLowerCase();
    for (const app of this.apps.values()) if (app.slug.toLowerCase() === wanted) return app;
    return undefined;
  }

  findAppByClientId(clientId: string): AppRecord | undefined {
    for (const app of this.apps.values()) if (app.clientId === clientId) return app;
    return undefined;
  }

  findAppByHookId(hookId: number): AppRecord | undefined {
    for (const app of this.apps.values()) if (app.hookId === hookId) return app;
    return undefined;
  }

  hooksOfRepository(repositoryId: number): HookRecord[] {
    return [...this.hooks.values()].filter((hook) => hook.repositoryId === repositoryId);
  }

  findWorkflow(repositoryId: number, path: string): WorkflowRecord | undefined {
    for (const workflow of this.workflows.values()) {
      if (workflow.repositoryId === repositoryId && workflow.path === path) return workflow;
    }
    return undefined;
  }
}
