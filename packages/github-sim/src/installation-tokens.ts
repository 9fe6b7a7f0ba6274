import { toGitHubTimestamp } from './clock.js';
import { GitHubApiError, invalidRequest } from './github-error.js';
import { randomAlphanumeric } from './ids.js';
import { notOfType } from './json-schema-messages.js';
import { repositoryPayload } from './payloads/repository-payload.js';
import type { SimContext } from './sim-context.js';
import type { InstallationRecord, InstallationTokenRecord, RepositoryRecord } from './sim-state.js';
import type { InstallationPermissions } from './types.js';

export const CREATE_TOKEN_DOCUMENTATION_URL =
  'https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app';

/** Installation access tokens expire after one hour. */
export const INSTALLATION_TOKEN_LIFETIME_MS = 60 * 60 * 1000;

const LEVEL = { read: 1, write: 2 } as const;

/** True when `held` grants at least `needed` (`write` includes `read`). */
export function grants(held: 'read' | 'write' | undefined, needed: 'read' | 'write'): boolean {
  return held !== undefined && LEVEL[held] >= LEVEL[needed];
}

function unprocessable(message: string): GitHubApiError {
  return new GitHubApiError(422, message, CREATE_TOKEN_DOCUMENTATION_URL);
}

function arrayOf<T>(value: unknown, pointer: string, check: (item: unknown) => item is T, type: string): T[] {
  if (!Array.isArray(value))
    throw invalidRequest(notOfType(pointer, value, 'array'), CREATE_TOKEN_DOCUMENTATION_URL);
  for (const [index, item] of value.entries()) {
    if (!check(item)) {
      throw invalidRequest(
        notOfType(`${pointer}/items/${index}`, item, type),
        CREATE_TOKEN_DOCUMENTATION_URL,
      );
    }
  }
  return value as T[];
}

/**
 * Creates an installation access token (`ghs_…`, one hour), optionally narrowed by the body's
 * `repositories` (names), `repository_ids` and `permissions`, as
 * `POST /app/installations/{installation_id}/access_tokens` does.
 */
export function createInstallationToken(ctx: SimContext, installation: InstallationRecord, body: unknown) {
  const request = body === undefined || body === null ? {} : body;
  if (typeof request !== 'object' || Array.isArray(request)) {
    throw invalidRequest(notOfType('links/0/schema', request, 'object'), CREATE_TOKEN_DOCUMENTATION_URL);
  }
  const { repositories, repository_ids: repositoryIds, permissions } = request as Record<string, unknown>;
  const installed = installation.repositoryIds
    .map((id) => ctx.state.repositories.get(id))
    .filter((repo): repo is RepositoryRecord => repo !== undefined);

  let narrowed: RepositoryRecord[] | null = null;
  const notAccessible =
    'There is at least one repository that does not exist or is not accessible to the parent installation.';
  if (repositories !== undefined) {
    const names = arrayOf(
      repositories,
      'properties/repositories',
      (item): item is string => typeof item === 'string',
      'string',
    );
    narrowed = names.map((name) => {
      const repo = installed.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
      if (repo === undefined) throw unprocessable(notAccessible);
      return repo;
    });
  }
  if (repositoryIds !== undefined) {
    const ids = arrayOf(
      repositoryIds,
      'properties/repository_ids',
      (item): item is number => typeof item === 'number' && Number.isInteger(item),
      'integer',
    );
    const byId = ids.map((id) => {
      const repo = installed.find((candidate) => candidate.id === id);
      if (repo === undefined) throw unprocessable(notAccessible);
      return repo;
    });
    narrowed = [...(narrowed ?? []), ...byId.filter((repo) => !(narrowed ?? []).includes(repo))];
  }

  let granted: InstallationPermissions = { ...installation.permissions };
  if (permissions !== undefined) {
    if (typeof permissions !== 'object' || permissions === null || Array.isArray(permissions)) {
      throw invalidRequest(
        notOfType('properties/permissions', permissions, 'object'),
        CREATE_TOKEN_DOCUMENTATION_URL,
      );
    }
    granted = {};
    for (const [name, level] of Object.entries(permissions)) {
      if ((level !== 'read' && level !== 'write') || !grants(installation.permissions[name], level)) {
        throw unprocessable('The permissions requested are not granted to this installation.');
      }
      granted[name] = level;
    }
    granted.metadata ??= 'read';
  }

  const token: InstallationTokenRecord = {
    token: `ghs_${randomAlphanumeric(36)}`,
    installationId: installation.id,
    expiresAt: new Date(ctx.clock.now().getTime() + INSTALLATION_TOKEN_LIFETIME_MS),
    permissions: granted,
    repositoryIds: narrowed === null ? null : narrowed.map((repo) => repo.id),
  };
  ctx.state.installationTokens.set(token.token, token);
  return {
    token: token.token,
    expires_at: toGitHubTimestamp(token.expiresAt),
    permissions: { ...granted },
    repository_selection: 'selected' as const,
    ...(narrowed === null ? {} : { repositories: narrowed.map((repo) => repositoryPayload(repo, ctx.urls)) }),
  };
}

/** The repositories a token may use now: its installation's, narrowed by the token if it was. */
export function tokenRepositories(ctx: SimContext, token: InstallationTokenRecord): RepositoryRecord[] {
  const installation = ctx.state.liveInstallation(token.installationId);
  if (installation === undefined) return [];
  return installation.repositoryIds
    .filter((id) => token.repositoryIds === null || token.repositoryIds.includes(id))
    .map((id) => ctx.state.repositories.get(id))
    .filter((repo): repo is RepositoryRecord => repo !== undefined);
}
