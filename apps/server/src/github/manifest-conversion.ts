import { Octokit } from '@octokit/core';
import { describeFailure } from './github-client.js';

/**
 * The manifest flow's last step: `POST /app-manifests/{code}/conversions` trades the temporary
 * code GitHub sent the browser back with for the new App's credentials. No credentials are sent:
 * the code, single use and valid for an hour, is the proof.
 * https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest
 */
export interface ConvertedApp {
  id: number;
  slug: string;
  name: string;
  htmlUrl: string;
  owner: string;
  clientId: string;
  clientSecret: string;
  webhookSecret: string;
  pem: string;
}

/**
 * GitHub refused the code (`status` 404: unknown, used or expired; 422: GitHub's validation), or
 * did not answer (`status` undefined).
 */
export class ManifestConversionError extends Error {
  override readonly name = 'ManifestConversionError';
  constructor(
    readonly status: number | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const CONVERSION_TIMEOUT_MS = 10_000;

export async function convertManifestCode(input: {
  apiUrl: string;
  code: string;
  userAgent?: string;
}): Promise<ConvertedApp> {
  const octokit = new Octokit({
    baseUrl: input.apiUrl.replace(/\/+$/, ''),
    userAgent: input.userAgent ?? 'zekt',
    request: { retries: 0 },
  });
  const request = () =>
    octokit.request('POST /app-manifests/{code}/conversions', {
      code: input.code,
      request: { signal: AbortSignal.timeout(CONVERSION_TIMEOUT_MS) },
    });
  let data: Awaited<ReturnType<typeof request>>['data'];
  try {
    ({ data } = await request());
  } catch (error) {
    const failure = describeFailure(error);
    throw new ManifestConversionError(failure.status, failure.message, { cause: error });
  }
  const owner = data.owner as { login?: string } | null;
  if (data.slug === undefined || data.webhook_secret === null || typeof owner?.login !== 'string') {
    throw new ManifestConversionError(
      undefined,
      'GitHub answered the conversion without the App’s slug, owner or webhook secret',
    );
  }
  return {
    id: data.id,
    slug: data.slug,
    name: data.name,
    htmlUrl: data.html_url,
    owner: owner.login,
    clientId: data.client_id,
    clientSecret: data.client_secret,
    webhookSecret: data.webhook_secret,
    pem: data.pem,
  };
}
