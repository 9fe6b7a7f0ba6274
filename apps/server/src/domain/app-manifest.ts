/**
 * The GitHub App manifest Zekt registers its App from, and where a browser posts it.
 * https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest
 *
 * What the App may do, and why each permission:
 * - `contents: write` — `repository_dispatch` to consumer repositories;
 * - `actions: write` — delivery by `workflow_dispatch`, and reading workflow runs;
 * - `repository_hooks: write` — placing the provider and completion-tracking webhooks;
 * - `metadata: read` — every App has it.
 * No default events: Zekt receives workflow runs through the repository hooks it places, and
 * GitHub sends every App its installation events anyway.
 */
export const APP_PERMISSIONS = {
  contents: 'write',
  metadata: 'read',
  actions: 'write',
  repository_hooks: 'write',
} as const;

/** GitHub App names are 1–34 characters. */
export const MAX_APP_NAME_LENGTH = 34;

/** Whom the App is registered for: the person's own account, or an organisation of theirs. */
export type ManifestOwner = { kind: 'user' } | { kind: 'organization'; login: string };

export interface AppManifest {
  name: string;
  url: string;
  description: string;
  hook_attributes: { url: string; active: boolean };
  redirect_url: string;
  callback_urls: string[];
  setup_url: string;
  setup_on_update: boolean;
  request_oauth_on_install: boolean;
  public: boolean;
  default_permissions: typeof APP_PERMISSIONS;
  default_events: string[];
}

/**
 * The manifest for a Zekt at `baseUrl`: its webhook, the page GitHub sends the browser back to
 * with the code (`/setup/callback`), the console login's callback, and the setup page as the
 * App's Setup URL (where GitHub sends people after they install it).
 *
 * `public`: a private App can only be installed on the account that owns it, so it must be
 * public when providers and consumers are different organisations.
 */
export function appManifest(input: { baseUrl: string; name: string; public: boolean }): AppManifest {
  const base = input.baseUrl.replace(/\/+$/, '');
  return {
    name: input.name,
    url: `${base}/`,
    description: `Zekt at ${base}: delivers the completion of provider workflows to subscribed repositories as repository_dispatch events.`,
    hook_attributes: { url: `${base}/webhooks/github`, active: true },
    redirect_url: `${base}/setup/callback`,
    callback_urls: [`${base}/auth/callback`],
    setup_url: `${base}/setup`,
    setup_on_update: false,
    // Installing must not start a login: GitHub then ignores the Setup URL.
    request_oauth_on_install: false,
    public: input.public,
    default_permissions: APP_PERMISSIONS,
    default_events: [],
  };
}

/** Where the browser posts the manifest: `<GITHUB_URL>/settings/apps/new?state=…`, or the organisation's. */
export function manifestFormAction(webUrl: string, owner: ManifestOwner, state: string): string {
  const path =
    owner.kind === 'user'
      ? '/settings/apps/new'
      : `/organizations/${encodeURIComponent(owner.login)}/settings/apps/new`;
  return `${webUrl.replace(/\/+$/, '')}${path}?state=${encodeURIComponent(state)}`;
}

/** A name that tells this deployment's App apart: `Zekt <host>`, cut to GitHub's 34 characters. */
export function defaultAppName(baseUrl: string): string {
  return `Zekt ${new URL(baseUrl).host}`.slice(0, MAX_APP_NAME_LENGTH).trim();
}

/** Why GitHub would refuse the name, or null. */
export function appNameProblem(name: string): string | null {
  const trimmed = name.trim();
  if (!/[A-Za-z0-9]/.test(trimmed)) return 'the App needs a name with at least one letter or digit';
  if (trimmed.length > MAX_APP_NAME_LENGTH) {
    return `GitHub App names are at most ${MAX_APP_NAME_LENGTH} characters (got ${trimmed.length})`;
  }
  return null;
}

/** GitHub's login shape: letters, digits and inner hyphens, at most 39 characters. */
export function isGitHubLogin(value: string): boolean {
  return /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$/.test(value);
}
