import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactSign, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOidcVerifier, OidcTokenError, OidcUnavailableError } from './oidc-verifier.js';

/** A real JWKS endpoint on loopback, standing in for GitHub's issuer. */
let server: Server;
let issuer: string;
type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let signingKey: PrivateKey;
let otherKey: PrivateKey;

const claims = {
  repository: 'acme/api',
  repository_id: '4242',
  repository_owner: 'acme',
  run_id: '9000000001',
  run_attempt: '1',
  workflow_ref: 'acme/api/.github/workflows/deploy.yml@refs/heads/main',
  actor: 'alice',
  sha: 'a'.repeat(40),
  ref: 'refs/heads/main',
  event_name: 'push',
};

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  signingKey = pair.privateKey;
  otherKey = (await generateKeyPair('RS256')).privateKey;
  const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  server = createServer((request, response) => {
    if (request.url === '/oidc/.well-known/jwks') {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ keys: [jwk] }));
      return;
    }
    response.statusCode = 404;
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oidc`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function token(
  options: { key?: PrivateKey; iss?: string; aud?: string; exp?: number; payload?: object } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...claims, ...options.payload })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'JWT' })
    .setIssuer(options.iss ?? issuer)
    .setAudience(options.aud ?? 'api://zekt')
    .setIssuedAt(now)
    .setNotBefore(now - 300)
    .setExpirationTime(options.exp ?? now + 3600)
    .sign(options.key ?? signingKey);
}

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OidcTokenError) return error.reason;
    if (error instanceof OidcUnavailableError) return 'unavailable';
    throw error;
  }
  return 'accepted';
}

describe('OIDC verification', () => {
  const verifier = () => createOidcVerifier({ issuer, audience: 'api://zekt', clockToleranceSeconds: 0 });

  it('takes the run and repository from the claims', async () => {
    expect(await verifier().verify(await token())).toEqual({
      repository: 'acme/api',
      repositoryId: 4242,
      repositoryOwner: 'acme',
      runId: 9000000001,
      runAttempt: 1,
      workflowRef: 'acme/api/.github/workflows/deploy.yml@refs/heads/main',
      actor: 'alice',
      sha: 'a'.repeat(40),
      ref: 'refs/heads/main',
      eventName: 'push',
    });
  });

  it('refuses expired, foreign, forged and unsigned tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    const v = verifier();
    expect(await failure(v.verify(undefined))).toBe('missing');
    expect(await failure(v.verify(await token({ exp: now - 10 })))).toBe('expired');
    expect(await failure(v.verify(await token({ aud: 'https://github.com/acme' })))).toBe('wrong_audience');
    expect(await failure(v.verify(await token({ iss: 'https://token.actions.githubusercontent.com' })))).toBe(
      'wrong_issuer',
    );
    expect(await failure(v.verify(await token({ key: otherKey })))).toBe('bad_signature');
    const [header, payload] = (await token()).split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    expect(await failure(v.verify(none))).toBe('algorithm_not_allowed');
    const hs256 = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience('api://zekt')
      .setExpirationTime(now + 60)
      .sign(new TextEncoder().encode('x'.repeat(32)));
    expect(await failure(v.verify(hs256))).toBe('algorithm_not_allowed');
    expect(await failure(v.verify(`${header}.garbage.sig`))).toBe('bad_signature');
    const signedGarbage = await new CompactSign(new TextEncoder().encode('not json'))
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .sign(signingKey);
    expect(await failure(v.verify(signedGarbage))).toBe('malformed');
    expect(await failure(v.verify('not-a-jwt'))).toBe('malformed');
    expect(await failure(v.verify(await token({ payload: { run_id: undefined } })))).toBe('missing_claims');
  });

  it('reports an unreachable issuer as unavailable, not as a bad token', async () => {
    const unreachable = createOidcVerifier({ issuer: 'http://127.0.0.1:1/oidc', audience: 'api://zekt' });
    expect(await failure(unreachable.verify(await token()))).toBe('unavailable');
  });
});
