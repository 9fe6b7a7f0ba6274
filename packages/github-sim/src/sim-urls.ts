import { OIDC_ISSUER_PATH } from './oidc-issuer.js';

/**
 * The simulator's two bases, laid out like GitHub Enterprise Server: the web host (`html_url`s)
 * and the REST API under `/api/v3` (`url`s). They are known only once the server listens, so
 * payload builders read them when they run.
 */
export interface SimUrls {
  /** e.g. `http://127.0.0.1:43121` */
  base: string;
  /** e.g. `http://127.0.0.1:43121/api/v3` */
  api: string;
}

export function createSimUrls(base: string): SimUrls {
  return { base, api: `${base}/api/v3` };
}

/** The issuer URL of Actions OIDC tokens: `<url>/_services/token`, like GHES. */
export function oidcIssuerUrl(urls: SimUrls): string {
  return `${urls.base}${OIDC_ISSUER_PATH}`;
}
