import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Checked,
  checkPayload,
  describeEventTypeProblem,
  type MessagePayload,
} from './message-input.js';

/**
 * The action's inputs, read once and checked together: every problem is reported in one failure,
 * before any request (no OIDC token, no call to Zekt), naming the input to fix.
 */

export const MODES = ['message', 'confirm', 'complete', 'fetch-payload'] as const;
export type Mode = (typeof MODES)[number];

export const AUTH_METHODS = ['oidc', 'delivery-token'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/** Every input the code reads; `action.yml` declares each of them (a test checks both ways). */
export const INPUT_NAMES = [
  'mode',
  'zekt-api-url',
  'audience',
  'retry-base-delay-ms',
  'event-type',
  'payload',
  'payload-file',
  'auth',
  'success',
  'path',
] as const;
export type InputName = (typeof INPUT_NAMES)[number];

export const DEFAULT_AUDIENCE = 'api://zekt';
export const DEFAULT_RETRY_BASE_DELAY_MS = 1000;
const MAX_RETRY_BASE_DELAY_MS = 60_000;

export interface CommonInputs {
  /** The service's base URL, without a trailing slash (it may carry a path prefix). */
  apiUrl: URL;
  audience: string;
  retryBaseDelayMs: number;
}

export type ActionInputs =
  | (CommonInputs & { mode: 'message'; eventType: string; payload: MessagePayload })
  | (CommonInputs & { mode: 'confirm'; auth: AuthMethod })
  | (CommonInputs & { mode: 'complete'; auth: AuthMethod; success: boolean })
  | (CommonInputs & { mode: 'fetch-payload'; auth: AuthMethod; path: string });

export type InputsResult = { ok: true; inputs: ActionInputs } | { ok: false; problems: string[] };

/**
 * Reads the inputs through `getInput` (`core.getInput` in the action: `INPUT_<NAME>`, trimmed) and
 * `env` (for `RUNNER_TEMP`).
 *
 * @example readInputs((name) => ({ mode: 'confirm', 'zekt-api-url': 'https://zekt.example.com' })[name] ?? '', {})
 */
export function readInputs(
  getInput: (name: InputName) => string,
  env: Record<string, string | undefined>,
): InputsResult {
  const problems: string[] = [];

  const modeText = getInput('mode') || 'message';
  const mode = MODES.find((m) => m === modeText);
  if (!mode) problems.push(`mode must be one of ${MODES.join(', ')}; got ${JSON.stringify(modeText)}`);

  const apiUrl = readApiUrl(getInput('zekt-api-url'), problems);

  const audience = getInput('audience') || DEFAULT_AUDIENCE;

  const delayText = getInput('retry-base-delay-ms');
  const retryBaseDelayMs = delayText === '' ? DEFAULT_RETRY_BASE_DELAY_MS : Number(delayText);
  if (
    !Number.isInteger(retryBaseDelayMs) ||
    retryBaseDelayMs < 0 ||
    retryBaseDelayMs > MAX_RETRY_BASE_DELAY_MS
  ) {
    problems.push(
      `retry-base-delay-ms must be a whole number of milliseconds from 0 to ${MAX_RETRY_BASE_DELAY_MS}; got ${JSON.stringify(delayText)}`,
    );
  }

  const authText = getInput('auth') || 'oidc';
  const auth = AUTH_METHODS.find((a) => a === authText);
  if (mode && mode !== 'message' && !auth) {
    problems.push(`auth must be one of ${AUTH_METHODS.join(', ')}; got ${JSON.stringify(authText)}`);
  }

  let eventType = '';
  let payload: MessagePayload | undefined;
  if (mode === 'message') {
    eventType = getInput('event-type');
    const eventTypeProblem = describeEventTypeProblem(eventType);
    if (eventTypeProblem) problems.push(eventTypeProblem);
    const checked = readPayload(getInput('payload'), getInput('payload-file'));
    if (checked.ok) payload = checked.value;
    else problems.push(checked.problem);
  }

  let success = true;
  if (mode === 'complete') {
    // YAML 1.2's core booleans, as core.getBooleanInput accepts them; `${{ job.status == 'success' }}` gives true/false.
    const text = getInput('success') || 'true';
    if (['true', 'True', 'TRUE'].includes(text)) success = true;
    else if (['false', 'False', 'FALSE'].includes(text)) success = false;
    else
      problems.push(
        `success must be true or false (e.g. \${{ job.status == 'success' }}); got ${JSON.stringify(text)}`,
      );
  }

  const path = getInput('path') || join(env.RUNNER_TEMP || tmpdir(), 'zekt-payload.json');

  if (problems.length > 0 || !mode || !apiUrl) return { ok: false, problems };
  const common: CommonInputs = { apiUrl, audience, retryBaseDelayMs };
  switch (mode) {
    case 'message':
      return { ok: true, inputs: { ...common, mode, eventType, payload: payload! } };
    case 'confirm':
      return { ok: true, inputs: { ...common, mode, auth: auth! } };
    case 'complete':
      return { ok: true, inputs: { ...common, mode, auth: auth!, success } };
    case 'fetch-payload':
      return { ok: true, inputs: { ...common, mode, auth: auth!, path } };
  }
}

/**
 * The message comes from `payload`, or from `payload-file` when a previous step wrote it to a
 * file: the runner passes inputs as environment variables, and Linux refuses to start a process
 * with one longer than 128 KB (E2BIG), so a message between that and 512 KB can only come as a file.
 */
function readPayload(text: string, file: string): Checked<MessagePayload> {
  if (file === '') return checkPayload(text);
  if (text !== '' && text !== '{}') {
    return { ok: false, problem: 'give the message as payload or as payload-file, not both' };
  }
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (error) {
    return { ok: false, problem: `payload-file ${file} cannot be read: ${(error as Error).message}` };
  }
  if (content.trim() === '')
    return { ok: false, problem: `payload-file ${file} is empty; it must hold a JSON text` };
  const checked = checkPayload(content);
  return checked.ok
    ? checked
    : { ok: false, problem: checked.problem.replace(/^payload /, `payload-file ${file} `) };
}

function readApiUrl(text: string, problems: string[]): URL | undefined {
  if (text === '') {
    // A self-hosted service has no well-known address: the workflow has to say where it runs.
    problems.push(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, for the workflow file.
      'zekt-api-url is required: the base URL of your Zekt service (its ZEKT_BASE_URL), e.g. zekt-api-url: ${{ vars.ZEKT_API_URL }}; there is no public default',
    );
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    problems.push(
      `zekt-api-url is not a URL: ${JSON.stringify(text)}; give the service's base URL, e.g. https://zekt.example.com`,
    );
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    problems.push(`zekt-api-url must be an http(s) URL; got ${url.protocol}`);
    return undefined;
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    problems.push('zekt-api-url must be a plain base URL, without credentials, query or fragment');
    return undefined;
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  if (/\/api(\/|$)/.test(url.pathname)) {
    problems.push(
      `zekt-api-url is the service's base URL (e.g. ${url.origin}), not an endpoint; got ${JSON.stringify(text)}`,
    );
    return undefined;
  }
  return url;
}

/**
 * An endpoint of the service: the base URL's path prefix (a service behind a reverse proxy at
 * `/zekt`) is kept.
 *
 * @example endpoint(new URL('https://zekt.example.com'), '/api/events/receive') // 'https://zekt.example.com/api/events/receive'
 */
export function endpoint(apiUrl: URL, path: string): string {
  return `${apiUrl.origin}${apiUrl.pathname.replace(/\/+$/, '')}${path}`;
}
