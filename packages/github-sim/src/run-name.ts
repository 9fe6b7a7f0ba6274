/**
 * Evaluates a workflow's `run-name` the way GitHub renders `display_title`: every `${{ … }}` is
 * replaced by the value of its expression. Only property paths into the `github` context are
 * understood (`github.event.client_payload.zekt.deliveryId`, `github.repository`,
 * `github.run_id`, …, with `.name` or `['name']` steps); GitHub compares context property names
 * case-insensitively, and so does this. Anything else — unknown properties, functions, operators —
 * evaluates to '' (GitHub renders a missing property as an empty string too).
 * https://docs.github.com/actions/writing-workflows/choosing-what-your-workflow-does/evaluate-expressions-in-workflows-and-actions
 */

const EXPRESSION = /\$\{\{\s*(.*?)\s*\}\}/g;
const PATH = /^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\['[^']*'\])*$/;
const STEP = /\.([A-Za-z_][\w-]*)|\['([^']*)'\]/g;

function property(value: unknown, name: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, name)) return record[name];
  const lower = name.toLowerCase();
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : record[key];
}

/** GitHub's conversion of a value to a string inside a template. */
function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'Array' : 'Object';
}

function evaluate(expression: string, contexts: Record<string, unknown>): string {
  if (!PATH.test(expression)) return '';
  const head = /^[A-Za-z_][\w-]*/.exec(expression)?.[0] ?? '';
  let value = property(contexts, head);
  for (const match of expression.slice(head.length).matchAll(STEP)) {
    value = property(value, match[1] ?? match[2] ?? '');
  }
  return asText(value);
}

/**
 * @example evaluateRunName('zekt ${{ github.event.action }}', { github: { event: { action: 'deployed' } } })
 * // 'zekt deployed'
 */
export function evaluateRunName(template: string, contexts: Record<string, unknown>): string {
  return template.replace(EXPRESSION, (_whole, expression: string) => evaluate(expression, contexts));
}
