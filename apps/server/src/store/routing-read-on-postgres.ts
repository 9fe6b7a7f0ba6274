import { CompiledQuery, type Kysely, sql } from 'kysely';
import { sharedStatement } from './engine/shared-statements.js';
import { buildMessageByRunKey } from './messages.js';
import type { Database, MessageRow } from './schema.js';
import { buildRoutableSubscriptions, type RoutableSubscriptionRow } from './subscriptions.js';

type Params = { repositoryId: number; runId: number; runAttempt: number; workflowPath: string };

/**
 * What routing reads of whitelisted workflows' events on PostgreSQL — each run's message and its
 * workflow's routable subscriptions — in one statement for any number of events (a shared
 * statement: engine/shared-statements.ts). One row per event, each read as JSON, so a message is
 * sent once however many subscriptions there are. JSON gives the values as the driver's parsers do
 * here: int8 as numbers (engine/postgres.ts), booleans. One statement sees one snapshot, taken after
 * the runs' locks: a message committed before us is joined.
 */
export const readRoutingOnPostgres = sharedStatement(
  async (
    db,
    rows: readonly Params[],
  ): Promise<Array<{ message: MessageRow | undefined; subscriptions: RoutableSubscriptionRow[] }>> => {
    const input = JSON.stringify(
      rows.map((p, i) => ({
        i,
        repository_id: p.repositoryId,
        run_id: p.runId,
        run_attempt: p.runAttempt,
        workflow_path: p.workflowPath,
      })),
    );
    const result = await db.executeQuery<{
      i: number;
      message: MessageRow | null;
      subscriptions: RoutableSubscriptionRow[];
    }>(routingRead(db, input));
    const byRow = new Map(result.rows.map((row) => [row.i, row]));
    return rows.map((_, i) => {
      const row = byRow.get(i);
      return { message: row?.message ?? undefined, subscriptions: row?.subscriptions ?? [] };
    });
  },
);

// The reads are routing's own builders (messages.ts, subscriptions.ts), correlated to each input
// row instead of bound to one run's values; compiled once, the input's slot found by its marker.
const INPUT = '\u0000routing-read-input';
let template: { sql: string; parameters: readonly unknown[]; slot: number } | undefined;
function routingRead(db: Kysely<Database>, input: string): CompiledQuery {
  if (!template) {
    const run = {
      repositoryId: sql.ref('input.repository_id'),
      runId: sql.ref('input.run_id'),
      runAttempt: sql.ref('input.run_attempt'),
      workflowPath: sql.ref('input.workflow_path'),
    } as unknown as Params;
    const compiled = sql`with input as (
  select * from json_to_recordset(cast(${INPUT} as json)) as r(i integer, repository_id bigint,
    run_id bigint, run_attempt integer, workflow_path text)
)
select input.i,
  (select to_json(m) from (${buildMessageByRunKey(db, run)}) m) as message,
  (select coalesce(json_agg(s order by s.subscription_id), '[]')
    from (${buildRoutableSubscriptions(db, run)}) s) as subscriptions
from input`.compile(db);
    template = {
      sql: compiled.sql,
      parameters: compiled.parameters,
      slot: compiled.parameters.indexOf(INPUT),
    };
  }
  const parameters = [...template.parameters];
  parameters[template.slot] = input;
  return CompiledQuery.raw(template.sql, parameters);
}
