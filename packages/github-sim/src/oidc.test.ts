import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSimulator } from '../test/support/test-simulator.js';
import type { GitHubSimulator, RunWorkflowResult } from './index.js';

let sim: GitHubSimulator;
let result: RunWorkflowResult;
let repositoryId: number;
beforeAll(async () => {
  sim = await createTestSimulator();
  const { repositories } = await sim.createInstallation({
    account: { login: 'acme', type: 'Organization' },
    repositories: [{ name: 'provider', private: true }],
    sender: { login: 'octocat' },
  });
  repositoryId = repositories[0]?.id ?? 0;
  result = await sim.runWorkflow({ repository: 'acme/provider', workflow: 'deploy.yml', actor: 'octocat' });
});
afterAll(() => sim.close());

/** What `@actions/core`'s `getIDToken(audience)` does with the step environment. */
async function getIdToken(env: Record<string, string>, audience?: string) {
  const url =
    audience === undefined
      ? env.ACTIONS_ID_TOKEN_REQUEST_URL
      : `${env.ACTIONS_ID_TOKEN_REQUEST_URL}&audience=${encodeURIComponent(audience)}`;
  return fetch(url ?? '', {
    headers: { authorization: `Bearer ${env.ACTIONS_ID_TOKEN_REQUEST_TOKEN}`, accept: 'application/json' },
  });
}

describe('the Actions OIDC issuer', () => {
  it('publishes discovery and a JWKS that verify a token minted through the runtime endpoint', async () => {
    const discovery = (await (
      await fetch(`${sim.oidcIssuer}/.well-known/openid-configuration`)
    ).json()) as Record<string, unknown>;
    expect(discovery).toMatchObject({
      issuer: sim.oidcIssuer,
      jwks_uri: `${sim.oidcIssuer}/.well-known/jwks`,
      subject_types_supported: expect.arrayContaining(['public']),
      response_types_supported: ['id_token'],
      claims_supported: expect.arrayContaining(['repository', 'run_id', 'workflow_ref', 'job_workflow_ref']),
      id_token_signing_alg_values_supported: ['RS256'],
      scopes_supported: ['openid'],
    });
    const jwks = (await (await fetch(String(discovery.jwks_uri))).json()) as {
      keys: Array<Record<string, string>>;
    };
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', use: 'sig', alg: 'RS256', kid: expect.any(String) });

    expect(result.env.ACTIONS_ID_TOKEN_REQUEST_URL).toBe(
      `${sim.url}/_services/token/idtoken?api-version=2.0`,
    );
    const response = await getIdToken(result.env, 'api://zekt');
    expect(response.status).toBe(200);
    const { value } = (await response.json()) as { value: string };

    const { payload, protectedHeader } = await jwtVerify(
      value,
      createRemoteJWKSet(new URL(String(discovery.jwks_uri))),
      {
        issuer: sim.oidcIssuer,
        audience: 'api://zekt',
        algorithms: ['RS256'],
      },
    );
    expect(protectedHeader).toMatchObject({
      alg: 'RS256',
      typ: 'JWT',
      kid: jwks.keys[0]?.kid,
      x5t: expect.any(String),
    });
    const { run } = result;
    expect(payload).toMatchObject({
      jti: expect.any(String),
      sub: 'repo:acme/provider:ref:refs/heads/main',
      aud: 'api://zekt',
      ref: 'refs/heads/main',
      ref_type: 'branch',
      ref_protected: 'false',
      sha: run.head_sha,
      repository: 'acme/provider',
      repository_id: String(repositoryId),
      repository_owner: 'acme',
      repository_owner_id: String(run.repository.owner.id),
      repository_visibility: 'private',
      run_id: String(run.id),
      run_number: '1',
      run_attempt: '1',
      runner_environment: 'github-hosted',
      actor: 'octocat',
      actor_id: String(run.actor.id),
      workflow: 'Deploy',
      workflow_ref: 'acme/provider/.github/workflows/deploy.yml@refs/heads/main',
      workflow_sha: run.head_sha,
      job_workflow_ref: 'acme/provider/.github/workflows/deploy.yml@refs/heads/main',
      job_workflow_sha: run.head_sha,
      event_name: 'push',
      iss: sim.oidcIssuer,
    });
    expect(payload.nbf).toBe((payload.iat ?? 0) - 300);
    expect(payload.exp).toBe((payload.iat ?? 0) + 300);
  });

  it('defaults the audience to the owner URL, as GitHub does', async () => {
    const response = await getIdToken(result.env);
    const { value } = (await response.json()) as { value: string };
    const claims = JSON.parse(Buffer.from(value.split('.')[1] ?? '', 'base64url').toString()) as {
      aud: string;
    };
    expect(claims.aud).toBe(`${sim.url}/acme`);
  });

  it('answers 401 to an unknown request token', async () => {
    const response = await getIdToken(
      { ...result.env, ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'forged' },
      'api://zekt',
    );
    expect(response.status).toBe(401);
    const journal = sim.journal().filter((entry) => entry.path === '/_services/token/idtoken');
    expect(journal.at(-1)).toMatchObject({ status: 401, auth: { kind: 'rejected' } });
  });

  it('mints tokens for tests, with overrides for forgeries', async () => {
    const token = await sim.mintOidcToken({
      repository: 'acme/provider',
      runId: result.run.id,
      audience: 'api://zekt',
      overrides: { repository: 'evil/repo' },
    });
    expect(decodeProtectedHeader(token).alg).toBe('RS256');
    const { payload } = await jwtVerify(
      token,
      createRemoteJWKSet(new URL(`${sim.oidcIssuer}/.well-known/jwks`)),
      {
        issuer: sim.oidcIssuer,
        audience: 'api://zekt',
      },
    );
    expect(payload).toMatchObject({
      repository: 'evil/repo',
      run_id: String(result.run.id),
      workflow: 'Deploy',
    });
  });
});
