/**
 * GitHub's REST error bodies. GitHub answers errors with `{ message, documentation_url, status }`
 * (status as a string) and validation failures with an `errors` array
 * (https://docs.github.com/rest/using-the-rest-api/troubleshooting-the-rest-api).
 */

export const GENERIC_DOCUMENTATION_URL = 'https://docs.github.com/rest';

export interface GitHubErrorBody {
  message: string;
  documentation_url: string;
  status: string;
  errors?: GitHubValidationError[];
}

export interface GitHubValidationError {
  resource: string;
  code: string;
  field?: string;
  message?: string;
}

/** An expected API failure; the API plugin renders it as GitHub's body with this status. */
export class GitHubApiError extends Error {
  readonly status: number;
  readonly body: GitHubErrorBody;
  /** Extra response headers, e.g. `x-accepted-github-permissions` on a 403. */
  readonly headers: Record<string, string> = {};

  constructor(status: number, message: string, documentationUrl: string, errors?: GitHubValidationError[]) {
    super(message);
    this.status = status;
    this.body = { message, documentation_url: documentationUrl, status: String(status) };
    if (errors !== undefined) this.body.errors = errors;
  }
}

/** 404 `Not Found`: GitHub's answer for anything the caller may not know exists. */
export function notFound(documentationUrl: string): GitHubApiError {
  return new GitHubApiError(404, 'Not Found', documentationUrl);
}

/** 401 `Bad credentials`: an unknown, revoked or expired token. */
export function badCredentials(): GitHubApiError {
  return new GitHubApiError(401, 'Bad credentials', GENERIC_DOCUMENTATION_URL);
}

/** 401 `Requires authentication`: no `Authorization` header at all. */
export function requiresAuthentication(documentationUrl: string): GitHubApiError {
  return new GitHubApiError(401, 'Requires authentication', documentationUrl);
}

/**
 * 403 `Resource not accessible by integration`: the installation lacks a permission. GitHub names
 * the permission the endpoint needs in `x-accepted-github-permissions` (e.g. `contents=write`).
 * https://docs.github.com/rest/authentication/permissions-required-for-github-apps
 */
export function notAccessibleByIntegration(documentationUrl: string, needed?: string): GitHubApiError {
  const error = new GitHubApiError(403, 'Resource not accessible by integration', documentationUrl);
  if (needed !== undefined) error.headers['x-accepted-github-permissions'] = needed;
  return error;
}

/** 422 `Validation Failed` with one error, the shape of hook validation failures. */
export function validationFailed(documentationUrl: string, error: GitHubValidationError): GitHubApiError {
  return new GitHubApiError(422, 'Validation Failed', documentationUrl, [error]);
}

/**
 * 422 `Invalid request.` — GitHub's JSON-schema validation of request bodies. Its detail lines
 * match the messages of the `json_schema` Ruby gem (brandur/json_schema, `validator.rb`):
 * e.g. `Only 100 characters are allowed; 101 were supplied.` and `"event_type" wasn't supplied.`
 */
export function invalidRequest(detail: string, documentationUrl: string): GitHubApiError {
  return new GitHubApiError(422, `Invalid request.\n\n${detail}`, documentationUrl);
}

/** 400 `Problems parsing JSON`: the body is not JSON. */
export function problemsParsingJson(documentationUrl: string): GitHubApiError {
  return new GitHubApiError(400, 'Problems parsing JSON', documentationUrl);
}
