import { toWorkflowPath, workflowFileName } from './workflow-path.js';

/**
 * How a subscription's deliveries reach the consumer repository:
 * - `repository_dispatch` (the default): `POST /repos/{owner}/{repo}/dispatches`; GitHub answers 204
 *   and starts whichever workflows listen for the event type, so Zekt learns of a run only from
 *   completion tracking (the run's name) or the consumer's confirm/complete steps.
 * - `workflow_dispatch`: `POST /repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches` to one
 *   workflow file, on a ref (the repository's default branch when none is set); GitHub answers with
 *   the run it created, so Zekt knows the run from the start and can follow it itself.
 */
export const DELIVERY_MODES = ['repository_dispatch', 'workflow_dispatch'] as const;
export type DeliveryMode = (typeof DELIVERY_MODES)[number];

/** Where a subscription's deliveries go, as the dispatcher calls GitHub. */
export type DeliveryRoute =
  | { mode: 'repository_dispatch' }
  | {
      mode: 'workflow_dispatch';
      /** The workflow's file name in `.github/workflows` of the consumer repository, e.g. `on-deploy.yml`. */
      workflow: string;
      /** The branch or tag the workflow runs on; null: the repository's default branch. */
      ref: string | null;
    };

/** The route stored as a subscription's three columns (`delivery_mode`, `dispatch_workflow`, `dispatch_ref`). */
export function deliveryRouteOf(columns: {
  mode: string | null;
  workflow: string | null;
  ref: string | null;
}): DeliveryRoute {
  return columns.mode === 'workflow_dispatch' && columns.workflow !== null
    ? { mode: 'workflow_dispatch', workflow: columns.workflow, ref: columns.ref }
    : { mode: 'repository_dispatch' };
}

/**
 * The `failureReason` of a delivery whose workflow GitHub does not have (404): failed at once, as
 * a retry would get the same answer until someone commits the file.
 */
export const WORKFLOW_NOT_FOUND = 'workflow_not_found';

export const MAX_REF_LENGTH = 255;

/**
 * A branch or tag a workflow can be dispatched on: a name (`main`, `release/v2`, `v1.2.3`) or a full
 * ref (`refs/heads/main`, `refs/tags/v1`), by git's rules for ref names (`git check-ref-format`):
 * no spaces or control characters, none of `~ ^ : ? * [ \`, no `..` or `@{`, no `//`, no component
 * starting with `.` or ending with `.lock`, not ending with `/` or `.`, not `@`, at most 255
 * characters. https://git-scm.com/docs/git-check-ref-format
 * @example isValidRef('release/v2') // true
 * @example isValidRef('main..dev') // false
 */
export function isValidRef(ref: unknown): ref is string {
  if (typeof ref !== 'string' || ref.length === 0 || ref.length > MAX_REF_LENGTH) return false;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
  if (/[\u0000-\u0020\u007f~^:?*[\\]/.test(ref)) return false;
  if (ref === '@' || ref.includes('..') || ref.includes('@{') || ref.includes('//')) return false;
  if (ref.startsWith('/') || ref.startsWith('-') || ref.endsWith('/') || ref.endsWith('.')) return false;
  return ref.split('/').every((part) => !part.startsWith('.') && !part.endsWith('.lock'));
}

/** What a consumer asks for (`PATCH /api/v1/subscriptions/{id}`): fields absent are kept. */
export interface DeliveryRouteChange {
  deliveryMode?: DeliveryMode | undefined;
  /** A file name (`on-deploy.yml`) or its path (`.github/workflows/on-deploy.yml`). */
  workflow?: string | undefined;
  /** null or '' : the default branch. */
  ref?: string | null | undefined;
}

export type RouteDecision =
  | { ok: true; route: DeliveryRoute }
  | { ok: false; code: 'invalid_workflow_file' | 'invalid_ref' | 'invalid_request'; detail: string };

/**
 * The route after a change, or why the change is refused. `workflow_dispatch` needs a workflow
 * (given now, or kept from before); `workflow` and `ref` belong to that mode only, so sending them
 * with `repository_dispatch` (or to a subscription in that mode without switching) is refused
 * rather than silently dropped. Switching back to `repository_dispatch` forgets workflow and ref.
 * @example decideDeliveryRoute({ mode: 'repository_dispatch' }, { deliveryMode: 'workflow_dispatch', workflow: 'on-zekt.yml' })
 *   // { ok: true, route: { mode: 'workflow_dispatch', workflow: 'on-zekt.yml', ref: null } }
 */
export function decideDeliveryRoute(current: DeliveryRoute, change: DeliveryRouteChange): RouteDecision {
  const mode = change.deliveryMode ?? current.mode;
  if (mode === 'repository_dispatch') {
    if (change.workflow !== undefined || (change.ref !== undefined && change.ref !== null)) {
      return {
        ok: false,
        code: 'invalid_request',
        detail:
          'workflow and ref apply to deliveryMode workflow_dispatch only: send { "deliveryMode": "workflow_dispatch", "workflow": "<file>.yml" }',
      };
    }
    return { ok: true, route: { mode } };
  }
  let workflow = current.mode === 'workflow_dispatch' ? current.workflow : null;
  if (change.workflow !== undefined) {
    const path = toWorkflowPath(change.workflow);
    if (path === null) {
      return {
        ok: false,
        code: 'invalid_workflow_file',
        detail: `workflow must be the file name of a workflow of the consumer repository, e.g. on-deploy.yml (letters, digits, ., _ and -, ending in .yml or .yaml); got ${JSON.stringify(change.workflow)}`,
      };
    }
    workflow = workflowFileName(path);
  }
  if (workflow === null) {
    return {
      ok: false,
      code: 'invalid_request',
      detail:
        'deliveryMode workflow_dispatch needs the workflow that receives the deliveries: { "deliveryMode": "workflow_dispatch", "workflow": "on-deploy.yml" }',
    };
  }
  let ref = current.mode === 'workflow_dispatch' ? current.ref : null;
  if (change.ref !== undefined) {
    if (change.ref === null || change.ref === '') ref = null;
    else if (!isValidRef(change.ref)) {
      return {
        ok: false,
        code: 'invalid_ref',
        detail: `ref must be a branch or tag name (e.g. main, release/v2, v1.2.3, refs/heads/main) by git's rules for ref names, or null for the repository's default branch; got ${JSON.stringify(change.ref)}`,
      };
    } else ref = change.ref;
  }
  return { ok: true, route: { mode, workflow, ref } };
}

/**
 * Whether Zekt can tell how a durable delivery's consumer run went without the consumer adding a
 * step: completion tracking (COMPLETION: the repository's `workflow_run` webhooks), or
 * `workflow_dispatch`, whose answer names the run Zekt then follows. Durable Delivery needs one.
 * @example tracksRuns({ mode: 'workflow_dispatch', completionTracking: false }) // true
 */
export function tracksRuns(input: { mode: DeliveryMode; completionTracking: boolean }): boolean {
  return input.completionTracking || input.mode === 'workflow_dispatch';
}
