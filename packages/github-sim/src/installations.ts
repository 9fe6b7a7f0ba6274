import { legacyNodeId } from './ids.js';
import { requireLogin } from './logins.js';
import { addMembership } from './org-members.js';
import { installationPayload } from './payloads/installation-payload.js';
import { repositoryPayload, repositoryRefPayload } from './payloads/repository-payload.js';
import { userPayload } from './payloads/user-payload.js';
import type { SimContext } from './sim-context.js';
import { SimInputError } from './sim-input-error.js';
import type { AccountRecord, AppRecord, InstallationRecord, RepositoryRecord } from './sim-state.js';
import type { CreateInstallationInput, InstallationChange, InstallationPermissions } from './types.js';
import { appHookTarget } from './webhook-targets.js';

const NAME = /^[A-Za-z0-9_.-]+$/;

function validatePermissions(value: unknown, app: AppRecord): InstallationPermissions {
  if (value === undefined) return { ...app.permissions };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SimInputError('permissions must be an object such as { "contents": "write" }');
  }
  const permissions: InstallationPermissions = {};
  for (const [name, level] of Object.entries(value)) {
    if (level !== 'read' && level !== 'write') {
      throw new SimInputError(`permission ${name} must be "read" or "write"; got ${JSON.stringify(level)}`);
    }
    permissions[name] = level;
  }
  // Every installation can read repository metadata.
  permissions.metadata ??= 'read';
  return permissions;
}

/** Parses `name`, `owner/name` (owner must be the account) or `{ name, private }`. */
function parseRepositoryInput(
  input: unknown,
  account: AccountRecord,
): { name: string; private: boolean | undefined } {
  const raw = typeof input === 'string' ? { name: input } : input;
  if (typeof raw !== 'object' || raw === null || typeof (raw as { name?: unknown }).name !== 'string') {
    throw new SimInputError(
      `a repository must be a name or { name, private? }; got ${JSON.stringify(input)}`,
    );
  }
  const { name: given, private: isPrivate } = raw as { name: string; private?: unknown };
  const parts = given.split('/');
  const name = parts.length === 2 ? parts[1] : given;
  if (parts.length === 2 && parts[0]?.toLowerCase() !== account.login.toLowerCase()) {
    throw new SimInputError(`repository ${given} does not belong to account ${account.login}`);
  }
  if (name === undefined || !NAME.test(name) || parts.length > 2) {
    throw new SimInputError(`invalid repository name ${JSON.stringify(given)}`);
  }
  if (isPrivate !== undefined && typeof isPrivate !== 'boolean') {
    throw new SimInputError(`repository ${given}: private must be a boolean`);
  }
  return { name, private: isPrivate };
}

/** Finds the account's repository or creates it (a repository keeps its id across installations). */
function ensureRepository(
  ctx: SimContext,
  account: AccountRecord,
  input: { name: string; private: boolean | undefined },
): RepositoryRecord {
  const existing = ctx.state.findRepository(account.login, input.name);
  if (existing !== undefined) {
    if (input.private !== undefined) existing.private = input.private;
    return existing;
  }
  const id = ctx.ids.repository();
  const repo: RepositoryRecord = {
    id,
    nodeId: legacyNodeId('Repository', id),
    name: input.name,
    owner: account,
    private: input.private ?? false,
    defaultBranch: 'main',
    createdAt: ctx.clock.now(),
    installationIds: [],
  };
  ctx.state.repositories.set(id, repo);
  return repo;
}

function requireInstallation(ctx: SimContext, installationId: number): InstallationRecord {
  const installation = ctx.state.liveInstallation(installationId);
  if (installation === undefined) throw new SimInputError(`no installation with id ${installationId}`);
  return installation;
}

function repositoriesOf(ctx: SimContext, installation: InstallationRecord): RepositoryRecord[] {
  return installation.repositoryIds
    .map((id) => ctx.state.repositories.get(id))
    .filter((repo): repo is RepositoryRecord => repo !== undefined);
}

function change(
  ctx: SimContext,
  installation: InstallationRecord,
  delivery: InstallationChange['delivery'],
): InstallationChange {
  return {
    installation: installationPayload(installation, ctx.state.appOf(installation), ctx.urls),
    repositories: repositoriesOf(ctx, installation).map((repo) => repositoryPayload(repo, ctx.urls)),
    delivery,
  };
}

function senderOf(ctx: SimContext, installation: InstallationRecord) {
  return userPayload(installation.sender, ctx.urls);
}

function include(repo: RepositoryRecord, installation: InstallationRecord): void {
  if (!repo.installationIds.includes(installation.id)) repo.installationIds.push(installation.id);
  if (!installation.repositoryIds.includes(repo.id)) installation.repositoryIds.push(repo.id);
}

function exclude(repo: RepositoryRecord, installation: InstallationRecord): void {
  repo.installationIds = repo.installationIds.filter((id) => id !== installation.id);
}

/** The App `app` names (its slug), or the App the simulator started with. */
function appToInstall(ctx: SimContext, slug: unknown): AppRecord {
  if (slug === undefined) return ctx.app;
  const app = typeof slug === 'string' ? ctx.state.findAppBySlug(slug) : undefined;
  if (app === undefined) throw new SimInputError(`no App with the slug ${JSON.stringify(slug)}`);
  return app;
}

/**
 * GitHub's rule: only the account that owns a private App can install it (an organisation's
 * private App, on that organisation).
 */
function mayInstall(app: AppRecord, account: AccountRecord): boolean {
  return app.public || app.owner.id === account.id;
}

/**
 * Installs the App on an account for some repositories and sends `installation` `created` to the
 * App webhook. https://docs.github.com/webhooks/webhook-events-and-payloads#installation
 */
export async function createInstallation(
  ctx: SimContext,
  input: CreateInstallationInput,
): Promise<InstallationChange> {
  if (
    typeof input !== 'object' ||
    input === null ||
    typeof input.account !== 'object' ||
    input.account === null
  ) {
    throw new SimInputError('createInstallation needs { account: { login, type? }, repositories: [...] }');
  }
  const login = requireLogin(input.account.login, 'account.login');
  const type = input.account.type ?? 'User';
  if (type !== 'User' && type !== 'Organization') {
    throw new SimInputError(`account.type must be "User" or "Organization"; got ${JSON.stringify(type)}`);
  }
  if (!Array.isArray(input.repositories)) throw new SimInputError('repositories must be an array');
  const app = appToInstall(ctx, input.app);
  const permissions = validatePermissions(input.permissions, app);
  const account = ctx.state.getOrCreateAccount(login, type);
  if (!mayInstall(app, account)) {
    throw new SimInputError(
      `${app.slug} is a private App of ${app.owner.login}: only ${app.owner.login} can install it`,
    );
  }
  const existing = ctx.state.findInstallationOfAccount(account.id, app.id);
  if (existing !== undefined) {
    throw new SimInputError(
      `${account.login} already has an installation of the App (id ${existing.id}); use addRepositories to add repositories`,
    );
  }
  const repoInputs = input.repositories.map((repo) => parseRepositoryInput(repo, account));
  // A user installs for themselves; an organisation is installed by one of its members.
  const senderLogin =
    input.sender?.login === undefined
      ? account.type === 'User'
        ? account.login
        : `${account.login}-admin`
      : requireLogin(input.sender.login, 'sender.login');
  const sender = ctx.state.getOrCreateAccount(senderLogin, 'User');

  const now = ctx.clock.now();
  const installation: InstallationRecord = {
    id: ctx.ids.installation(),
    appId: app.id,
    account,
    sender,
    repositoryIds: [],
    permissions,
    events: [...app.events],
    createdAt: now,
    updatedAt: now,
    deleted: false,
  };
  for (const repoInput of repoInputs) include(ensureRepository(ctx, account, repoInput), installation);
  ctx.state.installations.set(installation.id, installation);
  // Whoever installs the App on an organisation is one of its members (an owner, on GitHub).
  if (account.type === 'Organization') addMembership(ctx, account, sender);

  const delivery = await ctx.webhooks.send(appHookTarget(app), 'installation', {
    action: 'created',
    installation: installationPayload(installation, app, ctx.urls),
    repositories: repositoriesOf(ctx, installation).map(repositoryRefPayload),
    requester: null,
    sender: userPayload(sender, ctx.urls),
  });
  return change(ctx, installation, delivery);
}

/** Adds repositories to an installation; sends `installation_repositories` `added`. */
export async function addRepositories(
  ctx: SimContext,
  installationId: number,
  names: string[],
): Promise<InstallationChange> {
  const installation = requireInstallation(ctx, installationId);
  if (!Array.isArray(names) || names.length === 0) throw new SimInputError('names must be a non-empty array');
  const added: RepositoryRecord[] = [];
  for (const name of names) {
    const repo = ensureRepository(
      ctx,
      installation.account,
      parseRepositoryInput(name, installation.account),
    );
    if (installation.repositoryIds.includes(repo.id)) continue;
    include(repo, installation);
    added.push(repo);
  }
  installation.updatedAt = ctx.clock.now();
  const app = ctx.state.appOf(installation);
  const delivery = await ctx.webhooks.send(appHookTarget(app), 'installation_repositories', {
    action: 'added',
    installation: installationPayload(installation, app, ctx.urls),
    repository_selection: 'selected',
    repositories_added: added.map(repositoryRefPayload),
    repositories_removed: [],
    requester: null,
    sender: senderOf(ctx, installation),
  });
  return change(ctx, installation, delivery);
}

/** Removes repositories (`owner/name`) from an installation; sends `installation_repositories` `removed`. */
export async function removeRepositories(
  ctx: SimContext,
  installationId: number,
  fullNames: string[],
): Promise<InstallationChange> {
  const installation = requireInstallation(ctx, installationId);
  if (!Array.isArray(fullNames) || fullNames.length === 0) {
    throw new SimInputError('fullNames must be a non-empty array of owner/repo names');
  }
  const removed = fullNames.map((fullName) => {
    const repo = typeof fullName === 'string' ? ctx.state.findRepositoryByFullName(fullName) : undefined;
    if (repo === undefined || !installation.repositoryIds.includes(repo.id)) {
      throw new SimInputError(`${String(fullName)} is not a repository of installation ${installationId}`);
    }
    return repo;
  });
  for (const repo of removed) {
    installation.repositoryIds = installation.repositoryIds.filter((id) => id !== repo.id);
    exclude(repo, installation);
  }
  installation.updatedAt = ctx.clock.now();
  const app = ctx.state.appOf(installation);
  const delivery = await ctx.webhooks.send(appHookTarget(app), 'installation_repositories', {
    action: 'removed',
    installation: installationPayload(installation, app, ctx.urls),
    repository_selection: 'selected',
    repositories_added: [],
    repositories_removed: removed.map(repositoryRefPayload),
    requester: null,
    sender: senderOf(ctx, installation),
  });
  return change(ctx, installation, delivery);
}

/** Uninstalls the App: revokes the installation's tokens and sends `installation` `deleted`. */
export async function deleteInstallation(
  ctx: SimContext,
  installationId: number,
): Promise<InstallationChange> {
  const installation = requireInstallation(ctx, installationId);
  const repositories = repositoriesOf(ctx, installation);
  installation.deleted = true;
  installation.updatedAt = ctx.clock.now();
  for (const repo of repositories) exclude(repo, installation);
  for (const [token, record] of ctx.state.installationTokens) {
    if (record.installationId === installationId) ctx.state.installationTokens.delete(token);
  }
  const app = ctx.state.appOf(installation);
  const delivery = await ctx.webhooks.send(appHookTarget(app), 'installation', {
    action: 'deleted',
    installation: installationPayload(installation, app, ctx.urls),
    repositories: repositories.map(repositoryRefPayload),
    sender: senderOf(ctx, installation),
  });
  return {
    installation: installationPayload(installation, app, ctx.urls),
    repositories: repositories.map((repo) => repositoryPayload(repo, ctx.urls)),
    delivery,
  };
}
