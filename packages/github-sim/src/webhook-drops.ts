import { SimInputError } from './sim-input-error.js';
import type { WebhookDropRule, WebhookDropRuleStatus } from './types.js';
import type { DropDecision, WebhookTarget } from './webhook-sender.js';

interface LiveDropRule extends WebhookDropRule {
  id: string;
  remaining: number;
  dropped: number;
}

function fail(message: string): never {
  throw new SimInputError(`webhook drop rule: ${message}`);
}

/**
 * The simulator's webhook drop rules (`dropWebhooks`): a receiver that was down, a network that
 * lost the request. GitHub records such a delivery as failed and never retries it on its own; the
 * rule only decides, the sender records.
 */
export class WebhookDrops {
  private readonly rules: LiveDropRule[] = [];
  private seq = 1;

  add(raw: WebhookDropRule): { id: string } {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('the rule must be an object');
    const { event, repository, hookType, hookId, count, status } = raw;
    if (event !== undefined && (typeof event !== 'string' || !/^[a-z_]+$/.test(event))) {
      fail(`event must be a GitHub event name such as "workflow_run"; got ${JSON.stringify(event)}`);
    }
    if (
      repository !== undefined &&
      (typeof repository !== 'string' || !/^[^/\s]+\/[^/\s]+$/.test(repository))
    ) {
      fail(`repository must be "owner/name"; got ${JSON.stringify(repository)}`);
    }
    if (hookType !== undefined && hookType !== 'repository' && hookType !== 'app') {
      fail('hookType must be "repository" or "app"');
    }
    if (hookId !== undefined && (!Number.isInteger(hookId) || hookId < 1)) {
      fail(`hookId must be a hook's id (a positive whole number); got ${JSON.stringify(hookId)}`);
    }
    if (count !== undefined && (!Number.isInteger(count) || count < 1 || count > 10_000)) {
      fail(`count must be a whole number from 1 to 10000; got ${JSON.stringify(count)}`);
    }
    if (status !== undefined && (!Number.isInteger(status) || status < 400 || status > 599)) {
      fail(`status must be an HTTP error status from 400 to 599; got ${JSON.stringify(status)}`);
    }
    const rule: LiveDropRule = {
      id: `drop-${this.seq++}`,
      ...(event === undefined ? {} : { event }),
      ...(repository === undefined ? {} : { repository }),
      ...(hookType === undefined ? {} : { hookType }),
      ...(hookId === undefined ? {} : { hookId }),
      ...(status === undefined ? {} : { status }),
      count: count ?? 1,
      remaining: count ?? 1,
      dropped: 0,
    };
    this.rules.push(rule);
    return { id: rule.id };
  }

  clear(id?: string): void {
    if (id === undefined) {
      this.rules.length = 0;
      return;
    }
    const index = this.rules.findIndex((rule) => rule.id === id);
    if (index === -1) throw new SimInputError(`no webhook drop rule ${id}`);
    this.rules.splice(index, 1);
  }

  list(): WebhookDropRuleStatus[] {
    return this.rules.map((rule) => ({ ...rule }));
  }

  /** Consumes one drop of the first live rule matching this delivery, if any. */
  take(target: WebhookTarget, event: string): DropDecision | undefined {
    const rule = this.rules.find(
      (candidate) =>
        candidate.remaining > 0 &&
        (candidate.event === undefined || candidate.event === event) &&
        (candidate.hookType === undefined || candidate.hookType === target.hookType) &&
        (candidate.hookId === undefined || candidate.hookId === target.hookId) &&
        (candidate.repository === undefined ||
          candidate.repository.toLowerCase() === target.repository?.toLowerCase()),
    );
    if (rule === undefined) return undefined;
    rule.remaining -= 1;
    rule.dropped += 1;
    return { ruleId: rule.id, status: rule.status ?? null };
  }
}
