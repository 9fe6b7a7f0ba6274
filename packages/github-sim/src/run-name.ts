/**
 * Evaluates a workflow's `run-name` the way GitHub renders `display_title`: every `${{ … }}` is
 * replaced by the value of its expression. Property paths into the contexts given (`github`, and
 * `inputs` for a `workflow_dispatch` run) are understood (`github.event.client_payload.zekt.deliveryId`,
 * `github.repository`, `inputs.zekt`, …, with `.name` or `['name']` steps), and so is `fromJSON(<path>)`
 * followed by steps (`fromJSON(inputs.zekt).deliveryId`); GitHub compares context property names and
 * function names case-insensitively, and so does this. Anything else — unknown properties, other
 * functions, operators — evaluates to '' (GitHub renders a missing property as an empty string too).
 * https://docs.github.com/actions/writing-workflows/choosing-what-your-workflow-does/evaluate-expressions-in-workflows-and-actions
 */

const EXPRESSION = /\$\{\{\s*(.*?)\s*\}\}/g;
const PATH = /^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\['[^']*'\])*$/;
const STEP = /\.([A-Za-z_][\w-]*)|\['([^']*)'\]/g;
const STEPS = /^(?:\.[A-Za-z_][\w-]*|\['[^']*'\])*$/;
const FROM_JSON = /^fromjson\(\s*(.*?)\s*\)(.*)$/i;

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

function follow(value: unknown, steps: string): unknown {
  let current = value;
  for (const match of steps.matchAll(STEP)) current = property(current, match[1] ?? match[2] ?? '');
  return current;
}

function expressionValue(expression: string, contexts: Record<string, unknown>): unknown {
  const parsed = FROM_JSON.exec(expression);
  if (parsed !== null) {
    const [, inner = '', steps = ''] = parsed;
    if (!PATH.test(inner) || !STEPS.test(steps)) return undefined;
    const text = expressionValue(inner, contexts);
    if (typeof text !== 'string') return undefined;
    try {
      return follow(JSON.parse(text) as unknown, steps);
    } catch {
      // GitHub fails the run on invalid JSON; an empty title is the closest a name can show.
      return undefined;
    }
  }
  if (!PATH.test(expression)) return undefined;
  const head = /^[A-Za-z_][\w-]*/.exec(expression)?.[0] ?? '';
  return follow(property(contexts, head), expression.slice(head.length));
}

function evaluate(expression: string, contexts: Record<string, unknown>): string {
  return asText(expressionValue(expression, contexts));
}

/**
 * @example evaluateRunName('zekt ${{ github.event.action }}', { github: { event: { action: 'deployed' } } })
 * // 'zekt deployed'
 */
export function evaluateRunName(template: string, contexts: Record<string, unknown>): string {
  return template.replace(EXPRESSION, (_whole, expression: string) => evaluate(expression, contexts));
}
