import { compactVerify } from 'jose';
import type { AppIdentity } from './app-identity.js';
import { GENERIC_DOCUMENTATION_URL, GitHubApiError } from './github-error.js';

/**
 * GitHub's messages for rejected App JWTs. Octokit's `@octokit/auth-app` matches the three time
 * messages verbatim to detect clock skew and retry (see `isNotTimeSkewError` in its hook), so they
 * must stay exactly as GitHub writes them.
 * https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app
 */
export const JWT_MESSAGES = {
  undecodable: 'A JSON web token could not be decoded',
  expNotFuture:
    "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
  expTooFar: "'Expiration time' claim ('exp') is too far in the future",
  iatInvalid:
    "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
  issInvalid: "'Issuer' claim ('iss') must be an Integer",
  integrationNotFound: 'Integration not found',
} as const;

/** GitHub accepts an `iat` up to 60 s in the future to tolerate clock drift. */
export const IAT_DRIFT_SECONDS = 60;
/** `exp` may be at most 10 minutes after now. */
export const MAX_JWT_LIFETIME_SECONDS = 600;

export type AppJwtResult<A> = { ok: true; app: A } | { ok: false; error: GitHubApiError };

function reject(status: 401 | 404, message: string): { ok: false; error: GitHubApiError } {
  return { ok: false, error: new GitHubApiError(status, message, GENERIC_DOCUMENTATION_URL) };
}

function decodeSegment(segment: string | undefined): Record<string, unknown> | null {
  if (segment === undefined || !/^[A-Za-z0-9_-]+$/.test(segment)) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** True when the credential has the shape of a JWT (three dot-separated segments). */
export function looksLikeJwt(credential: string): boolean {
  return credential.split('.').length === 3;
}

/** Finds the App a JWT's `iss` names: by id, or by client id. */
export interface AppLookup<A extends AppIdentity> {
  byId(id: number): A | undefined;
  byClientId(clientId: string): A | undefined;
}

/**
 * Verifies an App JWT by GitHub's rules: RS256 signed with the key of the App `iss` names (its id,
 * as a number or numeric string, or its client id), `iat` an integer at most 60 s in the future,
 * and `exp` after now but at most 10 minutes away. An `iss` naming no App answers 404
 * `Integration not found`, as GitHub does for a wrong App id.
 */
export async function verifyAppJwt<A extends AppIdentity>(
  token: string,
  apps: AppLookup<A>,
  nowSeconds: number,
): Promise<AppJwtResult<A>> {
  const [headerSegment, payloadSegment] = token.split('.');
  const header = decodeSegment(headerSegment);
  const claims = decodeSegment(payloadSegment);
  if (header === null || claims === null || !looksLikeJwt(token))
    return reject(401, JWT_MESSAGES.undecodable);
  // Only RS256: `none`, HS256 (a classic key-confusion attack) and the rest are not decodable.
  if (header.alg !== 'RS256') return reject(401, JWT_MESSAGES.undecodable);

  const iss = claims.iss;
  let app: A | undefined;
  if (typeof iss === 'number' && Number.isInteger(iss)) app = apps.byId(iss);
  else if (typeof iss === 'string' && /^\d+$/.test(iss)) app = apps.byId(Number(iss));
  else if (typeof iss === 'string' && apps.byClientId(iss) !== undefined) app = apps.byClientId(iss);
  else if (typeof iss === 'string' && /^Iv[0-9a-z]/i.test(iss)) app = undefined;
  else return reject(401, JWT_MESSAGES.issInvalid);
  if (app === undefined) return reject(404, JWT_MESSAGES.integrationNotFound);

  try {
    await compactVerify(token, app.publicKey, { algorithms: ['RS256'] });
  } catch {
    return reject(401, JWT_MESSAGES.undecodable);
  }

  const { iat, exp } = claims;
  if (typeof iat !== 'number' || !Number.isInteger(iat) || iat > nowSeconds + IAT_DRIFT_SECONDS) {
    return reject(401, JWT_MESSAGES.iatInvalid);
  }
  if (typeof exp !== 'number' || !Number.isFinite(exp) || exp <= nowSeconds) {
    return reject(401, JWT_MESSAGES.expNotFuture);
  }
  if (exp > nowSeconds + MAX_JWT_LIFETIME_SECONDS) return reject(401, JWT_MESSAGES.expTooFar);
  return { ok: true, app };
}
