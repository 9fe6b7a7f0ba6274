/**
 * Redirect URIs of the OAuth web flow. GitHub's rule for a `redirect_uri` against a registered
 * callback URL: same scheme, host and port, and a path equal to or below the callback's path
 * (https://docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps#redirect-urls).
 * The simulator does not extend it to subdomains, as GitHub does for OAuth Apps only.
 */

/** The value as an absolute http(s) URL, or undefined. */
export function httpUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

function isBelow(path: string, base: string): boolean {
  if (path === base) return true;
  return path.startsWith(base.endsWith('/') ? base : `${base}/`);
}

export function matchesCallbackUrl(redirect: URL, callback: URL): boolean {
  return (
    redirect.protocol === callback.protocol &&
    redirect.hostname === callback.hostname &&
    // `port` is '' for the scheme's default port, so `:443` and no port compare equal.
    redirect.port === callback.port &&
    isBelow(redirect.pathname, callback.pathname)
  );
}

/** True when the App has no callback URLs (anything goes) or one of them admits the redirect. */
export function redirectAllowed(redirect: URL, callbackUrls: readonly string[]): boolean {
  if (callbackUrls.length === 0) return true;
  return callbackUrls.some((callback) => {
    const url = httpUrl(callback);
    return url !== undefined && matchesCallbackUrl(redirect, url);
  });
}

/** The redirect URI with `params` added to its query, keeping the parameters it already has. */
export function withQuery(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return url.toString();
}
