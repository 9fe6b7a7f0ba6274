import { createHash, createPublicKey, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, type JWK, SignJWT } from 'jose';

/** The GHES-style issuer path: `https://HOSTNAME/_services/token`. */
export const OIDC_ISSUER_PATH = '/_services/token';

/** GitHub's Actions OIDC tokens live 5 minutes (`exp` = `iat` + 300, `nbf` = `iat` − 300). */
export const DEFAULT_OIDC_TOKEN_LIFETIME_SECONDS = 300;
const NOT_BEFORE_LEEWAY_SECONDS = 300;

/**
 * The claims GitHub lists in its discovery document
 * (https://token.actions.githubusercontent.com/.well-known/openid-configuration).
 */
const CLAIMS_SUPPORTED = [
  'sub',
  'aud',
  'exp',
  'iat',
  'iss',
  'jti',
  'nbf',
  'ref',
  'sha',
  'repository',
  'repository_id',
  'repository_owner',
  'repository_owner_id',
  'enterprise',
  'enterprise_id',
  'run_id',
  'run_number',
  'run_attempt',
  'actor',
  'actor_id',
  'workflow',
  'workflow_ref',
  'workflow_sha',
  'head_ref',
  'base_ref',
  'event_name',
  'ref_type',
  'ref_protected',
  'environment',
  'environment_node_id',
  'job_workflow_ref',
  'job_workflow_sha',
  'repository_visibility',
  'runner_environment',
  'check_run_id',
];

/** What a workflow run tells the issuer about itself; the claims are derived from it. */
export interface OidcSubject {
  repository: { id: number; fullName: string; ownerLogin: string; ownerId: number; private: boolean };
  actor: { login: string; id: number };
  workflowName: string;
  /** e.g. `.github/workflows/deploy.yml` */
  workflowPath: string;
  ref: string;
  sha: string;
  runId: number;
  runNumber: number;
  runAttempt: number;
  eventName: string;
  checkRunId: number;
}

/**
 * The claims of a GitHub Actions OIDC token, laid out like a real one: numeric ids are strings,
 * `sub` is `repo:<owner>/<repo>:ref:<ref>`, and workflow refs point at the workflow file.
 * https://docs.github.com/actions/reference/security/oidc#oidc-token-claims
 */
export function oidcClaims(subject: OidcSubject, audience: string): Record<string, unknown> {
  const { repository, actor } = subject;
  const workflowRef = `${repository.fullName}/${subject.workflowPath}@${subject.ref}`;
  return {
    actor: actor.login,
    actor_id: String(actor.id),
    aud: audience,
    base_ref: '',
    check_run_id: String(subject.checkRunId),
    event_name: subject.eventName,
    head_ref: '',
    job_workflow_ref: workflowRef,
    job_workflow_sha: subject.sha,
    jti: randomUUID(),
    ref: subject.ref,
    ref_protected: 'false',
    ref_type: subject.ref.startsWith('refs/tags/') ? 'tag' : 'branch',
    repository: repository.fullName,
    repository_id: String(repository.id),
    repository_owner: repository.ownerLogin,
    repository_owner_id: String(repository.ownerId),
    repository_visibility: repository.private ? 'private' : 'public',
    run_attempt: String(subject.runAttempt),
    run_id: String(subject.runId),
    run_number: String(subject.runNumber),
    runner_environment: 'github-hosted',
    sha: subject.sha,
    sub: `repo:${repository.fullName}:ref:${subject.ref}`,
    workflow: subject.workflowName,
    workflow_ref: workflowRef,
    workflow_sha: subject.sha,
  };
}

/** The Actions OIDC issuer: one RSA signing key, its JWKS and discovery document, and minting. */
export class OidcIssuer {
  private constructor(
    private readonly privateKey: KeyObject,
    private readonly publicJwk: JWK,
    private readonly lifetimeSeconds: number,
  ) {}

  /** Signs with `signingKey` (an RSA private key) when given, else with a key of its own. */
  static async create(
    lifetimeSeconds = DEFAULT_OIDC_TOKEN_LIFETIME_SECONDS,
    signingKey?: KeyObject,
  ): Promise<OidcIssuer> {
    const privateKey = signingKey ?? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const publicKey = createPublicKey(privateKey);
    const jwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(jwk);
    // GitHub's keys carry an X.509 certificate; without one, x5t is the SHA-1 thumbprint of the
    // public key's DER (SPKI), which still identifies the key.
    const x5t = createHash('sha1')
      .update(publicKey.export({ type: 'spki', format: 'der' }))
      .digest('base64url');
    return new OidcIssuer(privateKey, { ...jwk, kid, use: 'sig', alg: 'RS256', x5t }, lifetimeSeconds);
  }

  get kid(): string {
    return this.publicJwk.kid ?? '';
  }

  jwks(): { keys: JWK[] } {
    return { keys: [{ ...this.publicJwk }] };
  }

  discovery(issuer: string) {
    return {
      issuer,
      jwks_uri: `${issuer}/.well-known/jwks`,
      subject_types_supported: ['public', 'pairwise'],
      response_types_supported: ['id_token'],
      claims_supported: [...CLAIMS_SUPPORTED],
      id_token_signing_alg_values_supported: ['RS256'],
      scopes_supported: ['openid'],
    };
  }

  /** Signs a token: header `{ alg: RS256, kid, typ: JWT, x5t }`; iat/nbf/exp from `nowSeconds`. */
  async mint(issuer: string, claims: Record<string, unknown>, nowSeconds: number): Promise<string> {
    // Standard time claims first, so overrides (tests forging tokens) can replace them too.
    const payload: Record<string, unknown> = {
      iss: issuer,
      iat: nowSeconds,
      nbf: nowSeconds - NOT_BEFORE_LEEWAY_SECONDS,
      exp: nowSeconds + this.lifetimeSeconds,
      ...claims,
    };
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', kid: this.kid, typ: 'JWT', x5t: this.publicJwk.x5t as string })
      .sign(this.privateKey);
  }
}
