import { type ActionsClaims, OidcTokenError, OidcUnavailableError } from '../github/oidc-verifier.js';
import type { AppContext } from './app-context.js';
import { HttpError } from './problem.js';

/** The bearer token of an `Authorization` header, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];
}

/**
 * Verifies a GitHub Actions OIDC token. A bad token is the caller's problem (401);
 * an issuer whose keys cannot be fetched is ours (503).
 */
export async function verifyActionsToken(
  context: Pick<AppContext, 'oidc'>,
  token: string | undefined,
): Promise<ActionsClaims> {
  try {
    return await context.oidc.verify(token);
  } catch (error) {
    if (error instanceof OidcTokenError) {
      throw new HttpError('invalid_token', error.message, { reason: error.reason });
    }
    if (error instanceof OidcUnavailableError) {
      throw new HttpError('oidc_unavailable', `${error.message}; try again shortly`, {}, { cause: error });
    }
    throw error;
  }
}
