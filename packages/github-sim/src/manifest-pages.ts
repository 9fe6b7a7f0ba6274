import type { Manifest } from './app-manifests.js';
import { escapeHtml, page } from './oauth-pages.js';

/**
 * The pages of the manifest flow on the simulated github.com: signing in, reviewing what the
 * manifest asks for under an editable name, and (without a `redirect_url`) the code. Every value
 * from the request goes through `escapeHtml`.
 */

/** The fields every form of the flow posts back, so the manifest and `state` survive each step. */
function carried(manifestJson: string, state: string | null): string {
  return [
    `<input type="hidden" name="manifest" value="${escapeHtml(manifestJson)}">`,
    ...(state === null ? [] : [`<input type="hidden" name="state" value="${escapeHtml(state)}">`]),
  ].join('\n');
}

export interface ManifestSignInInput {
  action: string;
  manifestJson: string;
  state: string | null;
  users: string[];
  problem?: string;
}

/** Nobody is signed in: sign in (as any login; no password) and come back to the review. */
export function manifestSignInPage(input: ManifestSignInInput): string {
  const problem = input.problem === undefined ? '' : `<p role="alert">${escapeHtml(input.problem)}</p>\n`;
  const known =
    input.users.length === 0 ? '' : `<p>Known users: ${input.users.map(escapeHtml).join(', ')}</p>\n`;
  return page(
    'Sign in to GitHub · Register a GitHub App',
    `<h1>Sign in to GitHub to register a GitHub App</h1>
${problem}${known}<form method="post" action="${escapeHtml(input.action)}">
${carried(input.manifestJson, input.state)}
<label>Username <input type="text" name="login" required autofocus></label>
<button type="submit">Sign in</button>
</form>`,
  );
}

export interface ManifestReviewInput {
  action: string;
  manifestJson: string;
  manifest: Manifest;
  state: string | null;
  /** The login of the account the App will belong to. */
  owner: string;
  name: string;
  problem?: string;
}

/** "Create GitHub App for <owner>": what the manifest asks for, the name to register it under. */
export function manifestReviewPage(input: ManifestReviewInput): string {
  const { manifest } = input;
  const problem = input.problem === undefined ? '' : `<p role="alert">${escapeHtml(input.problem)}</p>\n`;
  const row = (label: string, value: string) =>
    `<tr><th scope="row">${escapeHtml(label)}</th><td>${value}</td></tr>`;
  const text = (value: string | null) => (value === null ? '<em>none</em>' : escapeHtml(value));
  const permissions = Object.entries(manifest.permissions)
    .map(([name, level]) => `${escapeHtml(name)}: ${escapeHtml(level)}`)
    .join(', ');
  return page(
    `Create GitHub App for ${input.owner}`,
    `<h1>Create GitHub App for ${escapeHtml(input.owner)}</h1>
${problem}<table aria-label="Manifest">
${row('Homepage URL', text(manifest.url))}
${row('Webhook URL', manifest.hookActive ? text(manifest.hookUrl) : '<em>inactive</em>')}
${row('Redirect URL', text(manifest.redirectUrl))}
${row('Callback URLs', manifest.callbackUrls.length === 0 ? '<em>none</em>' : manifest.callbackUrls.map(escapeHtml).join(', '))}
${row('Setup URL', text(manifest.setupUrl))}
${row('Public', manifest.public ? 'yes: any account can install it' : 'no: only this account can install it')}
${row('Permissions', permissions)}
${row('Events', manifest.events.length === 0 ? '<em>none</em>' : manifest.events.map(escapeHtml).join(', '))}
</table>
<form method="post" action="${escapeHtml(input.action)}">
${carried(input.manifestJson, input.state)}
<input type="hidden" name="confirm" value="create">
<label>GitHub App name <input type="text" name="name" value="${escapeHtml(input.name)}" required></label>
<button type="submit">Create GitHub App</button>
</form>`,
  );
}

/** A manifest without `redirect_url`: GitHub has nowhere to send the code, so the page shows it. */
export function manifestCodePage(input: { appName: string; code: string }): string {
  return page(
    `Created ${input.appName}`,
    `<h1>${escapeHtml(input.appName)} was created</h1>
<p>Exchange this code with <code>POST /app-manifests/{code}/conversions</code> within an hour: <code id="code">${escapeHtml(input.code)}</code></p>`,
  );
}
