/**
 * The browser pages of the simulated github.com OAuth flow: the sign-in page and error pages. Every
 * value from the request or the simulator's state goes through `escapeHtml`, so a hostile `state`
 * or `login` stays text.
 */

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML content and (double- or single-quoted) attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char);
}

/** A whole page around `body` (HTML the caller built with `escapeHtml`). */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body>
<main>
${body}
</main>
<footer><p><small>zekt-github-sim: a local stand-in for github.com.</small></p></footer>
</body>
</html>
`;
}

/** A page that stops the flow, like GitHub's own error pages. */
export function errorPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}

export interface SignInPageInput {
  appName: string;
  /** The authorize path the links and the form go to. */
  action: string;
  /** The authorize request's query parameters, without `login`. */
  params: Array<[string, string]>;
  /** Logins of the users the simulator knows. */
  users: string[];
  /** What to put in the login field (e.g. a refused `login`). */
  login?: string;
  /** Why the sign-in did not happen, e.g. a malformed `login`. */
  problem?: string;
}

/**
 * "Sign in to GitHub to continue to <App>": one link per known user (the authorize URL plus
 * `login=<user>`), and a form to sign in as any other login. The simulator asks no password.
 */
export function signInPage(input: SignInPageInput): string {
  const href = (login: string) =>
    `${input.action}?${new URLSearchParams([...input.params, ['login', login]]).toString()}`;
  const users =
    input.users.length === 0
      ? '<p>No users yet.</p>'
      : `<ul>\n${input.users
          .map((login) => `<li><a href="${escapeHtml(href(login))}">${escapeHtml(login)}</a></li>`)
          .join('\n')}\n</ul>`;
  const hidden = input.params
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const problem = input.problem === undefined ? '' : `<p role="alert">${escapeHtml(input.problem)}</p>\n`;
  return page(
    `Sign in to GitHub · ${input.appName}`,
    `<h1>Sign in to GitHub to continue to ${escapeHtml(input.appName)}</h1>
${problem}<h2>Continue as</h2>
${users}
<h2>Sign in as someone else</h2>
<form method="get" action="${escapeHtml(input.action)}">
${hidden}
<label>Username <input type="text" name="login" value="${escapeHtml(input.login ?? '')}" required autofocus></label>
<button type="submit">Sign in</button>
</form>`,
  );
}

export interface InstallPageInput {
  appName: string;
  action: string;
  /** Who is signed in; null: the page asks someone to sign in first. */
  user: string | null;
  users: string[];
  problem?: string;
}

/** "Install <App>": on the signed-in user's account, with the repositories they name. */
export function installPage(input: InstallPageInput): string {
  const problem = input.problem === undefined ? '' : `<p role="alert">${escapeHtml(input.problem)}</p>\n`;
  if (input.user === null) {
    const links = input.users
      .map(
        (login) =>
          `<li><a href="${escapeHtml(`${input.action}?login=${encodeURIComponent(login)}`)}">${escapeHtml(login)}</a></li>`,
      )
      .join('\n');
    return page(
      `Install ${input.appName}`,
      `<h1>Sign in to GitHub to install ${escapeHtml(input.appName)}</h1>
${problem}<ul>
${links}
</ul>`,
    );
  }
  return page(
    `Install ${input.appName}`,
    `<h1>Install ${escapeHtml(input.appName)}</h1>
${problem}<p>Signed in as <strong>${escapeHtml(input.user)}</strong>. ${escapeHtml(input.appName)} will be installed on your account, for the repositories you name (created when they do not exist).</p>
<form method="post" action="${escapeHtml(input.action)}">
<label>Repositories <input type="text" name="repositories" placeholder="site, docs" required autofocus></label>
<button type="submit">Install</button>
</form>`,
  );
}

/** After an installation: what was installed where, and the way back to the App's site. */
export function installedPage(input: {
  appName: string;
  account: string;
  repositories: string[];
  returnTo: string | null;
}): string {
  const back =
    input.returnTo === null
      ? ''
      : `<p><a href="${escapeHtml(input.returnTo)}/">Return to ${escapeHtml(input.appName)}</a></p>`;
  return page(
    `Installed ${input.appName}`,
    `<h1>${escapeHtml(input.appName)} is installed on ${escapeHtml(input.account)}</h1>
<p>Repositories: ${input.repositories.map(escapeHtml).join(', ')}</p>
${back}`,
  );
}
