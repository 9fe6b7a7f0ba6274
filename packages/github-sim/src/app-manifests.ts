import { createAppIdentity } from './app-identity.js';
import { addApp } from './apps.js';
import { randomHex } from './ids.js';
import { httpUrl } from './redirect-uri.js';
import type { SimContext } from './sim-context.js';
import type { AccountRecord, AppRecord } from './sim-state.js';
import type { InstallationPermissions } from './types.js';

/**
 * GitHub's App manifest flow, GitHub's side: a person's browser posts a manifest to
 * `/settings/apps/new` (or `/organizations/{org}/settings/apps/new`), confirms the App's name, and
 * GitHub registers the App and sends the browser to the manifest's `redirect_url` with a temporary
 * `code` and the `state` it was given; `POST /app-manifests/{code}/conversions` then trades the
 * code, once and within an hour, for the App's id, key, webhook secret and OAuth credentials.
 * https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest
 */

/** All three steps of the flow must be done within an hour. */
export const MANIFEST_CODE_LIFETIME_MS = 60 * 60 * 1000;
/** GitHub App names are at most 34 characters. */
export const MAX_APP_NAME_LENGTH = 34;
/** GitHub lets an App register at most 10 callback URLs. */
const MAX_CALLBACK_URLS = 10;

/** The manifest's parameters the simulator uses, checked. */
export interface Manifest {
  name: string | null;
  url: string;
  description: string | null;
  hookUrl: string | null;
  hookActive: boolean;
  redirectUrl: string | null;
  callbackUrls: string[];
  setupUrl: string | null;
  public: boolean;
  permissions: InstallationPermissions;
  events: string[];
}

export type ManifestResult = { ok: true; manifest: Manifest } | { ok: false; problem: string };

function optionalUrl(value: unknown, name: string): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (httpUrl(value) === undefined) throw new Error(`${name} must be an absolute http(s) URL`);
  return value as string;
}

/** Reads the JSON the form's `manifest` field carries, by the rules GitHub's page applies. */
export function parseManifest(raw: unknown): ManifestResult {
  if (typeof raw !== 'string' || raw.trim() === '') {
    return { ok: false, problem: 'The request carries no manifest: post it as the form field "manifest".' };
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, problem: 'The manifest is not valid JSON.' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problem: 'The manifest must be a JSON object.' };
  }
  const m = value as Record<string, unknown>;
  try {
    const url = optionalUrl(m.url, 'url');
    if (url === null) throw new Error('url is required: the homepage of the App');
    if (m.name !== undefined && typeof m.name !== 'string') throw new Error('name must be a string');
    if (m.description !== undefined && m.description !== null && typeof m.description !== 'string') {
      throw new Error('description must be a string');
    }
    const hook = m.hook_attributes;
    if (hook !== undefined && (typeof hook !== 'object' || hook === null || Array.isArray(hook))) {
      throw new Error('hook_attributes must be an object such as { "url": "https://…" }');
    }
    const hookAttributes = (hook ?? {}) as Record<string, unknown>;
    const hookActive = hookAttributes.active === undefined ? true : hookAttributes.active === true;
    const hookUrl = optionalUrl(hookAttributes.url, 'hook_attributes.url');
    if (hook !== undefined && hookActive && hookUrl === null) {
      throw new Error('hook_attributes.url is required for an active webhook');
    }
    const callbacks = m.callback_urls ?? [];
    if (!Array.isArray(callbacks) || callbacks.length > MAX_CALLBACK_URLS) {
      throw new Error(`callback_urls must be an array of at most ${MAX_CALLBACK_URLS} URLs`);
    }
    const permissions: InstallationPermissions = {};
    const requested = m.default_permissions ?? {};
    if (typeof requested !== 'object' || requested === null || Array.isArray(requested)) {
      throw new Error('default_permissions must be an object such as { "contents": "read" }');
    }
    for (const [name, level] of Object.entries(requested)) {
      if (level !== 'read' && level !== 'write') {
        throw new Error(`default_permissions.${name} must be "read" or "write"`);
      }
      permissions[name] = level;
    }
    permissions.metadata ??= 'read';
    const events = m.default_events ?? [];
    if (!Array.isArray(events) || events.some((event) => typeof event !== 'string')) {
      throw new Error('default_events must be an array of event names');
    }
    if (m.public !== undefined && typeof m.public !== 'boolean') throw new Error('public must be a boolean');
    return {
      ok: true,
      manifest: {
        name: (m.name as string | undefined) ?? null,
        url,
        description: (m.description as string | undefined | null) ?? null,
        hookUrl,
        hookActive,
        redirectUrl: optionalUrl(m.redirect_url, 'redirect_url'),
        callbackUrls: callbacks.map((callback, index) => {
          const checked = optionalUrl(callback, `callback_urls[${index}]`);
          if (checked === null) throw new Error(`callback_urls[${index}] must be an absolute http(s) URL`);
          return checked;
        }),
        setupUrl: optionalUrl(m.setup_url, 'setup_url'),
        public: m.public === true,
        permissions,
        events: events as string[],
      },
    };
  } catch (error) {
    return { ok: false, problem: `The manifest is invalid: ${(error as Error).message}.` };
  }
}

/** GitHub's slug of an App name: lower case, every run of other characters one dash. */
export function slugOf(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Why GitHub would refuse the name, or null when it may be used. */
export function nameProblem(ctx: SimContext, name: string): string | null {
  const trimmed = name.trim();
  if (trimmed === '' || slugOf(trimmed) === '') return 'Name can’t be blank.';
  if (trimmed.length > MAX_APP_NAME_LENGTH) {
    return `Name is too long (maximum is ${MAX_APP_NAME_LENGTH} characters).`;
  }
  const taken = [...ctx.state.apps.values()].some(
    (app) => app.name.toLowerCase() === trimmed.toLowerCase() || app.slug === slugOf(trimmed),
  );
  return taken ? 'Name is already in use.' : null;
}

/**
 * Registers the App the person confirmed, owned by `owner`, and issues the code its registrant
 * trades for the credentials. GitHub generates the key, the webhook secret and the OAuth client.
 */
export function registerManifestApp(
  ctx: SimContext,
  input: { manifest: Manifest; name: string; owner: AccountRecord },
): { app: AppRecord; code: string } {
  const name = input.name.trim();
  const identity = createAppIdentity(
    {
      id: ctx.ids.app(),
      slug: slugOf(name),
      name,
      webhookUrl: input.manifest.hookActive ? input.manifest.hookUrl : null,
      events: input.manifest.events,
      callbackUrls: input.manifest.callbackUrls,
    },
    ctx.ids.hook(),
    ctx.clock.now(),
  );
  const app = addApp(ctx.state, identity, {
    owner: input.owner,
    permissions: input.manifest.permissions,
    public: input.manifest.public,
    setupUrl: input.manifest.setupUrl,
    externalUrl: input.manifest.url,
    description: input.manifest.description,
  });
  const code = randomHex(20);
  ctx.state.manifestCodes.set(code, {
    code,
    appId: app.id,
    expiresAt: new Date(ctx.clock.now().getTime() + MANIFEST_CODE_LIFETIME_MS),
  });
  return { app, code };
}

/** The App a live code stands for; the code is used up. Unknown, used or expired: undefined. */
export function redeemManifestCode(ctx: SimContext, code: string): AppRecord | undefined {
  const record = ctx.state.manifestCodes.get(code);
  if (record === undefined) return undefined;
  ctx.state.manifestCodes.delete(code);
  if (record.expiresAt.getTime() <= ctx.clock.now().getTime()) return undefined;
  return ctx.state.apps.get(record.appId);
}
