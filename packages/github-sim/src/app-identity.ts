import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { randomAlphanumeric, randomHex } from './ids.js';
import { httpUrl } from './redirect-uri.js';
import type { SimulatedApp } from './types.js';

export interface AppOptions {
  id?: number;
  slug?: string;
  name?: string;
  clientId?: string;
  clientSecret?: string;
  /** PKCS#8 or PKCS#1 PEM; an RSA 2048 key is generated when absent. */
  privateKeyPem?: string;
  webhookSecret?: string;
  webhookUrl?: string | null;
  events?: string[];
  /**
   * The App's user authorization callback URLs (GitHub allows up to 10). When set, the OAuth web
   * flow admits only a `redirect_uri` they allow, and uses the first one when none is given; when
   * absent, any http(s) `redirect_uri` is accepted.
   */
  callbackUrls?: string[];
}

/** GitHub lets an App register at most 10 callback URLs. */
const MAX_CALLBACK_URLS = 10;

function validateCallbackUrls(urls: unknown): string[] {
  if (urls === undefined) return [];
  if (!Array.isArray(urls) || urls.length > MAX_CALLBACK_URLS) {
    throw new Error(`app.callbackUrls must be an array of at most ${MAX_CALLBACK_URLS} http(s) URLs`);
  }
  for (const url of urls) {
    if (httpUrl(url) === undefined) {
      throw new Error(`app.callbackUrls: ${JSON.stringify(url)} is not an absolute http(s) URL`);
    }
  }
  return [...(urls as string[])];
}

/** An App's credentials and hook, plus the key objects used to verify its JWTs. */
export interface AppIdentity extends Omit<SimulatedApp, 'owner' | 'permissions' | 'public' | 'setupUrl'> {
  privateKey: KeyObject;
  publicKey: KeyObject;
  createdAt: Date;
}

/**
 * Builds the App from options, generating what is missing the way GitHub would issue it: a
 * PKCS#1 PEM private key (what the App settings page downloads), an `Iv23li…` client id and a
 * 40-hex client secret.
 */
export function createAppIdentity(options: AppOptions, hookId: number, createdAt: Date): AppIdentity {
  let privateKeyPem = options.privateKeyPem;
  if (privateKeyPem === undefined) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    privateKeyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  }
  let privateKey: KeyObject;
  try {
    // Keys kept in environment variables often carry escaped line breaks.
    privateKey = createPrivateKey(privateKeyPem.replace(/\\n/g, '\n'));
  } catch (cause) {
    throw new Error('app.privateKeyPem is not a PEM private key (PKCS#8 or PKCS#1 expected)', { cause });
  }
  if (privateKey.asymmetricKeyType !== 'rsa') {
    throw new Error(
      `app.privateKeyPem must be an RSA key (GitHub Apps sign RS256); got ${privateKey.asymmetricKeyType}`,
    );
  }
  const callbackUrls = validateCallbackUrls(options.callbackUrls);
  const slug = options.slug ?? 'zekt-dev';
  return {
    id: options.id ?? 1001,
    slug,
    name: options.name ?? slug,
    clientId: options.clientId ?? `Iv23li${randomAlphanumeric(14)}`,
    clientSecret: options.clientSecret ?? randomHex(20),
    privateKeyPem,
    webhookSecret: options.webhookSecret ?? randomHex(20),
    webhookUrl: options.webhookUrl ?? null,
    events: [...(options.events ?? [])],
    callbackUrls,
    hookId,
    privateKey,
    publicKey: createPublicKey(privateKey),
    createdAt,
  };
}
