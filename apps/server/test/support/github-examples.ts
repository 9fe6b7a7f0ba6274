import examples from '@octokit/webhooks-examples';

type Payload = Record<string, unknown>;
interface ExampleGroup {
  name: string;
  actions: string[];
  examples: Payload[];
}

/**
 * A real webhook payload from `@octokit/webhooks-examples` (GitHub's documented examples).
 * @example githubExample('workflow_run', (p) => p.action === 'completed')
 */
export function githubExample(event: string, matches: (payload: Payload) => boolean = () => true): Payload {
  const group = (examples as unknown as ExampleGroup[]).find((e) => e.name === event);
  const found = group?.examples.find(matches);
  if (!found) throw new Error(`no ${event} example matches`);
  return structuredClone(found);
}

export function githubExamples(event: string): Payload[] {
  return ((examples as unknown as ExampleGroup[]).find((e) => e.name === event)?.examples ?? []).map((p) =>
    structuredClone(p),
  );
}

/** The modern `workflow_run.completed` example (it has `workflow_run.path`). */
export function completedWorkflowRunExample(): Payload {
  return githubExample(
    'workflow_run',
    (p) => p.action === 'completed' && typeof (p.workflow_run as { path?: unknown }).path === 'string',
  );
}
