import { httpRequest } from './http-client.js';
import type { MessageInput, MessageResult } from './types.js';

export const MESSAGE_TIMEOUT_MS = 30_000;

export interface MessageStepInput {
  /** The step's environment: `ACTIONS_ID_TOKEN_REQUEST_URL` / `_TOKEN` and `GITHUB_*`. */
  env: Record<string, string>;
  message: MessageInput;
  audience: string;
  workflowName: string;
  timestamp: string;
}

/** A response body: parsed when it is JSON, else the text. */
export function parseBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Gets an OIDC token for a step the way `@actions/core`'s `getIDToken(audience)` does:
 * `GET <ACTIONS_ID_TOKEN_REQUEST_URL>&audience=…` with the request token, reading `{ value }`.
 * Resolves with the token or with the error `@actions/core` would report.
 */
export async function requestIdToken(
  env: Record<string, string>,
  audience: string,
  signal?: AbortSignal,
): Promise<{ token: string } | { error: string }> {
  try {
    const tokenResponse = await httpRequest({
      method: 'GET',
      url: `${env.ACTIONS_ID_TOKEN_REQUEST_URL}&audience=${encodeURIComponent(audience)}`,
      headers: {
        Accept: 'application/json',
        Authorization: `Bearer ${env.ACTIONS_ID_TOKEN_REQUEST_TOKEN}`,
        'User-Agent': 'actions/oidc-client',
      },
      timeoutMs: MESSAGE_TIMEOUT_MS,
      ...(signal === undefined ? {} : { signal }),
    });
    const value = (parseBody(tokenResponse.body) as { value?: unknown } | null)?.value;
    if (tokenResponse.status !== 200 || typeof value !== 'string') {
      return {
        error: `Failed to get ID Token. Error Code : ${tokenResponse.status} Error Message: ${tokenResponse.body}`,
      };
    }
    return { token: value };
  } catch (error) {
    return { error: `Failed to get ID Token: ${(error as Error).message}` };
  }
}

/**
 * Does what the zekt message action does inside a run, over real HTTP: gets an OIDC token from the
 * Actions runtime endpoint (`requestIdToken`), then posts the message to `<zektUrl>/api/events/receive`.
 */
export async function runMessageStep(input: MessageStepInput): Promise<MessageResult> {
  const { env, message } = input;
  const idToken = await requestIdToken(env, input.audience);
  if ('error' in idToken) return { status: 0, body: null, error: idToken.error };
  const token = idToken.token;

  const repository = env.GITHUB_REPOSITORY ?? '';
  const body = {
    eventType: message.eventType,
    payload: message.payload,
    repository,
    workflowRunId: env.GITHUB_RUN_ID,
    workflow: input.workflowName,
    triggeredBy: env.GITHUB_ACTOR,
    commitSha: env.GITHUB_SHA,
    ref: env.GITHUB_REF,
    timestamp: input.timestamp,
  };
  try {
    const response = await httpRequest({
      method: 'POST',
      url: `${message.zektUrl.replace(/\/+$/, '')}/api/events/receive`,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'x-github-repository': repository,
      },
      body: JSON.stringify(body),
      timeoutMs: MESSAGE_TIMEOUT_MS,
    });
    return { status: response.status, body: parseBody(response.body) };
  } catch (error) {
    return {
      status: 0,
      body: null,
      error: `POST ${message.zektUrl}/api/events/receive failed: ${(error as Error).message}`,
    };
  }
}
