import { SimInputError } from './sim-input-error.js';

const WORKFLOW_FILE = /^[A-Za-z0-9_.-]+\.ya?ml$/;

/** `deploy.yml` → `.github/workflows/deploy.yml`; refuses anything but a workflow file name. */
export function workflowPath(file: string): string {
  if (typeof file !== 'string' || !WORKFLOW_FILE.test(file)) {
    throw new SimInputError(
      `workflow must be a workflow file name such as "deploy.yml"; got ${JSON.stringify(file)}`,
    );
  }
  return `.github/workflows/${file}`;
}

/**
 * The default display name of a workflow without `name:`: its file name without extension,
 * capitalised.
 *
 * @example workflowDisplayName('deploy.yml') // 'Deploy'
 */
export function workflowDisplayName(file: string): string {
  const base = file.replace(/\.ya?ml$/, '');
  return base.charAt(0).toUpperCase() + base.slice(1);
}
