import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from 'jose';

/**
 * Verifies GitHub Actions OIDC tokens: RS256 only, signed by a key from the issuer's
 * JWKS, for our audience, not expired. The run and repository a message belongs to are taken from
 * these claims, never from the request body.
 * https://docs.github.com/actions/reference/security/oidc
 */
export interface ActionsClaims {
  repository: string;
  repositoryId: number;
  repositoryOwner: string;
  runId: number;
  runAttempt: number;
  workflowRef: string;
  actor: string | null;
  sha: string | null;
  ref: string | null;
  eventName: string | null;
}

export type OidcFailure =
  | 'missing'
  | 'malformed'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'wrong_issuer'
  | 'bad_signature'
  | 'algorithm_not_allowed'
  | 'missing_claims';

export class OidcTokenError extends Error {
  override readonly name = 'OidcTokenError';
  constructor(
    readonly reason: OidcFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The issuer's keys could not be fetched: not the caller's fault, answered with 503. */
export class OidcUnavailableError extends Error {
  override readonly name = 'OidcUnavailableError';
}

export interface OidcVerifierOptions {
  issuer: string;
  audience: string;
  /** Defaults to `<issuer>/.well-known/jwks`, where GitHub (and the simulator) serve their keys. */
  jwksUrl?: string;
  /** Accepted clock difference between GitHub and us. */
  clockToleranceSeconds?: number;
  /** Seconds since epoch; injected so tests can check expiry without waiting. */
  currentDate?: () => Date;
}

export interface OidcVerifier {
  verify(token: string | undefined): Promise<ActionsClaims>;
}

export function createOidcVerifier(options: OidcVerifierOptions): OidcVerifier {
  const issuer = options.issuer.replace(/\/$/, '');
  const jwks = createRemoteJWKSet(new URL(options.jwksUrl ?? `${issuer}/.well-known/jwks`), {
    timeoutDuration: 5_000,
    cooldownDuration: 30_000,
  });
  return {
    async verify(token) {
      if (!token)
        throw new OidcTokenError('missing', 'an OIDC token is required (Authorization: Bearer <token>)');
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, jwks, {
          issuer,
          audience: options.audience,
          algorithms: ['RS256'],
          clockTolerance: options.clockToleranceSeconds ?? 30,
          ...(options.currentDate ? { currentDate: options.currentDate() } : {}),
        }));
      } catch (error) {
        throw classify(error, issuer, options.audience);
      }
      return readClaims(payload);
    },
  };
}

function classify(error: unknown, issuer: string, audience: string): Error {
  if (error instanceof errors.JWTExpired)
    return new OidcTokenError('expired', 'the OIDC token has expired', { cause: error });
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') {
      return new OidcTokenError('wrong_audience', `the OIDC token was not issued for audience ${audience}`, {
        cause: error,
      });
    }
    if (error.claim === 'iss') {
      return new OidcTokenError('wrong_issuer', `the OIDC token was not issued by ${issuer}`, {
        cause: error,
      });
    }
    if (error.claim === 'nbf') {
      return new OidcTokenError('not_yet_valid', 'the OIDC token is not valid yet', { cause: error });
    }
    return new OidcTokenError('malformed', `the OIDC token's ${error.claim} claim is invalid`, {
      cause: error,
    });
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new OidcTokenError('algorithm_not_allowed', 'the OIDC token must be signed with RS256', {
      cause: error,
    });
  }
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) {
    return new OidcTokenError(
      'bad_signature',
      "the OIDC token's signature does not match the issuer's keys",
      {
        cause: error,
      },
    );
  }
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || isFetchFailure(error)) {
    return new OidcUnavailableError(`the OIDC issuer's keys could not be fetched from ${issuer}`, {
      cause: error,
    });
  }
  if (error instanceof errors.JOSEError) {
    return new OidcTokenError('malformed', 'the OIDC token is not a valid JWT', { cause: error });
  }
  return new OidcTokenError('malformed', 'the OIDC token could not be read', { cause: error });
}

function isFetchFailure(error: unknown): boolean {
  return error instanceof TypeError || (error instanceof Error && error.name === 'AbortError');
}

function readClaims(payload: JWTPayload): ActionsClaims {
  const text = (name: string): string | null => {
    const value = payload[name];
    return typeof value === 'string' && value.length > 0 ? value : null;
  };
  const integer = (name: string): number | null => {
    const value = payload[name];
    const parsed = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
    return Number.isSafeInteger(parsed) && parsed > 0 ? parsed : null;
  };
  const repository = text('repository');
  const repositoryId = integer('repository_id');
  const runId = integer('run_id');
  const runAttempt = integer('run_attempt') ?? 1;
  const workflowRef = text('workflow_ref');
  if (!repository || !repositoryId || !runId || !workflowRef) {
    throw new OidcTokenError(
      'missing_claims',
      'the OIDC token lacks repository, repository_id, run_id or workflow_ref: is it a GitHub Actions token?',
    );
  }
  return {
    repository,
    repositoryId,
    repositoryOwner: text('repository_owner') ?? repository.split('/')[0]!,
    runId,
    runAttempt,
    workflowRef,
    actor: text('actor'),
    sha: text('sha'),
    ref: text('ref'),
    eventName: text('event_name'),
  };
}
