import type { FastifyRequest } from 'fastify';
import { looksLikeJwt, verifyAppJwt } from '../app-jwt.js';
import { epochSeconds } from '../clock.js';
import {
  badCredentials,
  GENERIC_DOCUMENTATION_URL,
  GitHubApiError,
  notAccessibleByIntegration,
  notFound,
  requiresAuthentication,
} from '../github-error.js';
import { grants } from '../installation-tokens.js';
import type { SimContext } from '../sim-context.js';
import type {
  AccountRecord,
  AppRecord,
  InstallationRecord,
  InstallationTokenRecord,
  RepositoryRecord,
  UserTokenRecord,
} from '../sim-state.js';
import { liveUserToken } from '../user-tokens.js';
import { getRequestState } from './request-state.js';

export type Caller =
  | { kind: 'none' }
  | { kind: 'app'; app: AppRecord }
  | { kind: 'installation'; token: InstallationTokenRecord; installation: InstallationRecord }
  | { kind: 'user'; token: UserTokenRecord; user: AccountRecord };

export type AppCaller = Extract<Caller, { kind: 'app' }>;
export type InstallationCaller = Extract<Caller, { kind: 'installation' }>;
export type UserCaller = Extract<Caller, { kind: 'user' }>;

/** A live installation token (its installation not deleted), or undefined. */
function installationCaller(ctx: SimContext, credential: string): InstallationCaller | undefined {
  const token = ctx.state.installationTokens.get(credential);
  if (token === undefined || token.expiresAt.getTime() <= ctx.clock.now().getTime()) return undefined;
  const installation = ctx.state.liveInstallation(token.installationId);
  return installation === undefined ? undefined : { kind: 'installation', token, installation };
}

/**
 * Reads `Authorization: Bearer <x>` / `token <x>` like GitHub: a JWT is the App, anything else must
 * be a live installation token or user access token. Invalid credentials are rejected here (401),
 * before any route logic.
 */
export async function authenticate(ctx: SimContext, request: FastifyRequest): Promise<Caller> {
  const state = getRequestState(request);
  const header = request.headers.authorization;
  if (header === undefined || header === '') return { kind: 'none' };
  const match = /^(bearer|token)\s+(\S+)\s*$/i.exec(header);
  const credential = match?.[2];
  try {
    if (credential === undefined) throw badCredentials();
    if (looksLikeJwt(credential)) {
      const result = await verifyAppJwt(
        credential,
        {
          byId: (id) => ctx.state.apps.get(id),
          byClientId: (clientId) => ctx.state.findAppByClientId(clientId),
        },
        epochSeconds(ctx.clock),
      );
      if (!result.ok) throw result.error;
      if (state !== undefined) {
        state.auth = { kind: 'app', appId: result.app.id };
        state.rateKey = `app:${result.app.id}`;
      }
      return { kind: 'app', app: result.app };
    }
    const installation = installationCaller(ctx, credential);
    if (installation !== undefined) {
      if (state !== undefined) {
        state.auth = { kind: 'installation', installationId: installation.installation.id };
        state.rateKey = `installation:${installation.installation.id}`;
      }
      return installation;
    }
    const userToken = liveUserToken(ctx, credential);
    if (userToken === undefined) throw badCredentials();
    if (state !== undefined) {
      state.auth = { kind: 'user', login: userToken.user.login };
      state.rateKey = `user:${userToken.user.id}`;
    }
    return { kind: 'user', token: userToken, user: userToken.user };
  } catch (error) {
    if (state !== undefined && error instanceof GitHubApiError) {
      state.auth = { kind: 'rejected', reason: error.message };
    }
    throw error;
  }
}

/** Endpoints that need an App JWT (`/app/...`, `/repos/{owner}/{repo}/installation`): the App it proves. */
export async function requireApp(
  ctx: SimContext,
  request: FastifyRequest,
  documentationUrl: string,
): Promise<AppRecord> {
  const caller = await authenticate(ctx, request);
  if (caller.kind === 'none') throw requiresAuthentication(documentationUrl);
  // An installation or user token where a JWT is required: GitHub tries to decode it as a JWT.
  if (caller.kind !== 'app') {
    throw new GitHubApiError(401, 'A JSON web token could not be decoded', GENERIC_DOCUMENTATION_URL);
  }
  return caller.app;
}

/** Endpoints that need an installation token. */
export async function requireInstallation(
  ctx: SimContext,
  request: FastifyRequest,
  documentationUrl: string,
): Promise<InstallationCaller> {
  const caller = await authenticate(ctx, request);
  if (caller.kind === 'none') throw requiresAuthentication(documentationUrl);
  // The App's JWT, or a user token: the simulator's installation endpoints act for installations only.
  if (caller.kind !== 'installation') throw notAccessibleByIntegration(documentationUrl);
  return caller;
}

/**
 * Endpoints that act for the signed-in user (`/user…`). Any other credential gets 403 with the
 * endpoint's own message.
 */
export async function requireUser(
  ctx: SimContext,
  request: FastifyRequest,
  documentationUrl: string,
  otherCredentialMessage: string,
): Promise<UserCaller> {
  const caller = await authenticate(ctx, request);
  if (caller.kind === 'none') throw requiresAuthentication(documentationUrl);
  if (caller.kind !== 'user') throw new GitHubApiError(403, otherCredentialMessage, documentationUrl);
  return caller;
}

/**
 * The repository `owner/repo` if the token may see it (else 404, as GitHub hides repositories
 * outside the installation) and holds `permission` at `level` (else 403).
 */
export function repositoryForToken(
  ctx: SimContext,
  caller: InstallationCaller,
  owner: string,
  name: string,
  permission: string,
  level: 'read' | 'write',
  documentationUrl: string,
): RepositoryRecord {
  const repo = ctx.state.findRepository(owner, name);
  const visible =
    repo !== undefined &&
    caller.installation.repositoryIds.includes(repo.id) &&
    (caller.token.repositoryIds === null || caller.token.repositoryIds.includes(repo.id));
  if (!visible) throw notFound(documentationUrl);
  if (!grants(caller.token.permissions[permission], level)) {
    throw notAccessibleByIntegration(documentationUrl, `${permission}=${level}`);
  }
  return repo;
}

/**
 * Endpoints under `/repos/{owner}/{repo}/…` that need an installation token: the caller, and the
 * repository of the path if the token may see it and holds `permission` at `level`.
 */
export async function requireRepository(
  ctx: SimContext,
  request: FastifyRequest,
  permission: string,
  level: 'read' | 'write',
  documentationUrl: string,
): Promise<{ caller: InstallationCaller; repo: RepositoryRecord }> {
  const caller = await requireInstallation(ctx, request, documentationUrl);
  const { owner, repo: name } = request.params as { owner: string; repo: string };
  const repo = repositoryForToken(ctx, caller, owner, name, permission, level, documentationUrl);
  return { caller, repo };
}
