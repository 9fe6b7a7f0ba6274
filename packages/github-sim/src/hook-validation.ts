import { type GitHubApiError, invalidRequest, validationFailed } from './github-error.js';
import { checkHookUrl } from './hook-url-policy.js';
import { notOfType } from './json-schema-messages.js';
import type { HookConfig } from './sim-state.js';

export const CREATE_HOOK_DOCUMENTATION_URL =
  'https://docs.github.com/rest/repos/webhooks#create-a-repository-webhook';
export const UPDATE_HOOK_DOCUMENTATION_URL =
  'https://docs.github.com/rest/repos/webhooks#update-a-repository-webhook';

/**
 * Event names a repository hook may subscribe to (`*` = all). Kept permissive: a name GitHub
 * accepts must not be refused here. https://docs.github.com/webhooks/webhook-events-and-payloads
 */
const HOOK_EVENTS = new Set([
  '*',
  'branch_protection_configuration',
  'branch_protection_rule',
  'check_run',
  'check_suite',
  'code_scanning_alert',
  'commit_comment',
  'create',
  'custom_property_values',
  'delete',
  'dependabot_alert',
  'deploy_key',
  'deployment',
  'deployment_protection_rule',
  'deployment_review',
  'deployment_status',
  'discussion',
  'discussion_comment',
  'fork',
  'gollum',
  'issue_comment',
  'issue_dependencies',
  'issues',
  'label',
  'member',
  'merge_group',
  'meta',
  'milestone',
  'package',
  'page_build',
  'project',
  'project_card',
  'project_column',
  'public',
  'pull_request',
  'pull_request_review',
  'pull_request_review_comment',
  'pull_request_review_thread',
  'push',
  'registry_package',
  'release',
  'repository',
  'repository_advisory',
  'repository_dispatch',
  'repository_import',
  'repository_ruleset',
  'repository_vulnerability_alert',
  'secret_scanning_alert',
  'secret_scanning_alert_location',
  'secret_scanning_scan',
  'security_and_analysis',
  'star',
  'status',
  'sub_issues',
  'team_add',
  'watch',
  'workflow_dispatch',
  'workflow_job',
  'workflow_run',
]);

function asObject(value: unknown, pointer: string, documentationUrl: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest(notOfType(pointer, value, 'object'), documentationUrl);
  }
  return value as Record<string, unknown>;
}

function hookError(documentationUrl: string, message: string, field?: string): GitHubApiError {
  return validationFailed(documentationUrl, {
    resource: 'Hook',
    code: 'custom',
    ...(field === undefined ? {} : { field }),
    message,
  });
}

/**
 * Validates a hook `config` and returns what to store. Rules:
 * - `url` is required, an http(s) URL, and (on github.com) reachable over the public Internet:
 *   GitHub's message is `url is not supported because it isn't reachable over the public Internet (localhost)`.
 * - `content_type` must be `json`: the simulator only delivers JSON. GitHub's default is `form`,
 *   so an absent `content_type` is refused too — on GitHub that hook would get form-encoded bodies.
 */
export function validateHookConfig(
  value: unknown,
  allowPrivateHookUrls: boolean,
  documentationUrl: string,
): HookConfig {
  const config = asObject(value, 'properties/config', documentationUrl);
  const url = config.url;
  if (url === undefined || url === null || url === '') {
    throw hookError(documentationUrl, 'Config must contain URL for webhooks');
  }
  if (typeof url !== 'string') {
    throw invalidRequest(notOfType('properties/config/properties/url', url, 'string'), documentationUrl);
  }
  const check = checkHookUrl(url);
  if (!check.ok && check.reason === 'invalid') {
    throw hookError(
      documentationUrl,
      "The URL you've entered is not valid. Please make sure that you encode all special characters first",
      'url',
    );
  }
  if (!check.ok && check.reason === 'not-public' && !allowPrivateHookUrls) {
    throw hookError(
      documentationUrl,
      `url is not supported because it isn't reachable over the public Internet (${check.detail})`,
      'url',
    );
  }
  const contentType = config.content_type ?? 'form';
  if (contentType !== 'json') {
    throw hookError(
      documentationUrl,
      `content_type ${JSON.stringify(contentType)} is not supported by zekt-github-sim: it only delivers JSON payloads. ` +
        `Set config.content_type to "json" (GitHub's default is "form").`,
      'content_type',
    );
  }
  const insecureSsl = config.insecure_ssl ?? '0';
  if (insecureSsl !== '0' && insecureSsl !== '1' && insecureSsl !== 0 && insecureSsl !== 1) {
    throw invalidRequest(
      notOfType('properties/config/properties/insecure_ssl', insecureSsl, 'string'),
      documentationUrl,
    );
  }
  const secret = config.secret;
  if (secret !== undefined && secret !== null && typeof secret !== 'string') {
    throw invalidRequest(
      notOfType('properties/config/properties/secret', secret, 'string'),
      documentationUrl,
    );
  }
  const stored: HookConfig = { url, content_type: 'json', insecure_ssl: String(insecureSsl) };
  if (typeof secret === 'string' && secret !== '') stored.secret = secret;
  return stored;
}

/** Validates an `events` array: strings naming GitHub webhook events (or `*`). */
export function validateHookEvents(value: unknown, pointer: string, documentationUrl: string): string[] {
  if (!Array.isArray(value)) throw invalidRequest(notOfType(pointer, value, 'array'), documentationUrl);
  const events: string[] = [];
  for (const [index, event] of value.entries()) {
    if (typeof event !== 'string') {
      throw invalidRequest(notOfType(`${pointer}/items/${index}`, event, 'string'), documentationUrl);
    }
    if (!HOOK_EVENTS.has(event)) {
      // GitHub refuses unknown event names with 422 (developer.github.com/changes/2017-08-09);
      // the wording of this message is the simulator's.
      throw validationFailed(documentationUrl, {
        resource: 'Hook',
        code: 'invalid',
        field: 'events',
        message: `"${event}" is not a valid event name`,
      });
    }
    if (!events.includes(event)) events.push(event);
  }
  return events;
}

/** Validates `active`. */
export function validateHookActive(value: unknown, documentationUrl: string): boolean {
  if (typeof value !== 'boolean') {
    throw invalidRequest(notOfType('properties/active', value, 'boolean'), documentationUrl);
  }
  return value;
}

/** The body of a create/update request as an object (GitHub accepts an absent body as `{}`). */
export function hookRequestBody(body: unknown, documentationUrl: string): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  return asObject(body, 'links/0/schema', documentationUrl);
}
