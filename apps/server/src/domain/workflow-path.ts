/**
 * Workflow files are named by their path in the repository (`.github/workflows/deploy.yml`), as
 * GitHub's `workflow_run.path` does; the management API lets people write just the file name.
 */
const WORKFLOWS_DIR = '.github/workflows/';
const FILE_NAME = /^[A-Za-z0-9._-]+\.ya?ml$/;

/** `deploy.yml` or `.github/workflows/deploy.yml` → `.github/workflows/deploy.yml`; null when not a workflow file. */
export function toWorkflowPath(fileOrPath: string): string | null {
  const file = fileOrPath.startsWith(WORKFLOWS_DIR) ? fileOrPath.slice(WORKFLOWS_DIR.length) : fileOrPath;
  return FILE_NAME.test(file) ? WORKFLOWS_DIR + file : null;
}

export function workflowFileName(path: string): string {
  return path.startsWith(WORKFLOWS_DIR) ? path.slice(WORKFLOWS_DIR.length) : path;
}

/**
 * The workflow path of an OIDC `workflow_ref` claim:
 * `octo-org/octo-repo/.github/workflows/deploy.yml@refs/heads/main` → `.github/workflows/deploy.yml`.
 * https://docs.github.com/actions/reference/security/oidc
 */
export function workflowPathFromRef(workflowRef: string, repository: string): string | null {
  const prefix = `${repository}/`;
  if (!workflowRef.toLowerCase().startsWith(prefix.toLowerCase())) return null;
  const rest = workflowRef.slice(prefix.length);
  const at = rest.lastIndexOf('@');
  const path = at === -1 ? rest : rest.slice(0, at);
  return path.startsWith(WORKFLOWS_DIR) ? path : null;
}
