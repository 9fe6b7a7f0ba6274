import { readFileSync } from 'node:fs';
import { createSchemaCheckPool } from '../contracts/schema-check-pool.js';
import { localSchemaProblem } from '../domain/message-schema.js';
import { CliError } from './cli-error.js';

/**
 * `zekt schema check`: a provider checks a message file before pushing the workflow that sends it.
 * The schema comes from the API (a service's version in force, or `--version`) or from a local
 * file; the check runs on the same kind of thread, with the same Ajv settings, as Zekt's own when
 * the message arrives (contracts/), so what passes here passes there.
 */
export interface SchemaCheckCommand {
  /** The service (id or slug) read over the API; or null with `schemaFile`. */
  service: string | null;
  schemaFile: string | null;
  version: string | undefined;
  messageFile: string;
  api: { url: string; token: string | undefined };
  write: (text: string) => void;
}

/** Exit code: 0 the message matches, 1 it does not. A schema that cannot be used throws (exit 2). */
export async function checkMessageFile(command: SchemaCheckCommand): Promise<number> {
  const message = readJson(command.messageFile, 'the message');
  const { schema, name } = command.schemaFile
    ? { schema: readJson(command.schemaFile, 'the schema'), name: command.schemaFile }
    : await fetchSchema(command);
  const local = localSchemaProblem(schema);
  if (local) throw new CliError(`${name}: ${local.pointer || '(the schema)'}: ${local.message}`);
  const pool = createSchemaCheckPool({ threads: 1, validationTimeoutMs: 10_000, compileTimeoutMs: 30_000 });
  try {
    const compiled = await pool.compile(schema);
    if (!compiled.ok) {
      throw new CliError(
        `${name}: ${compiled.problem.pointer || '(the schema)'}: ${compiled.problem.message}`,
      );
    }
    const outcome = await pool.validate({
      key: 'cli',
      loadSchema: async () => JSON.stringify(schema),
      payloadJson: JSON.stringify(message),
    });
    if (outcome.errorCount === 0) {
      command.write(`✔ ${command.messageFile} matches ${name}\n`);
      return 0;
    }
    command.write(`✘ ${command.messageFile} does not match ${name}: ${outcome.errorCount} problem(s)\n`);
    for (const error of outcome.errors)
      command.write(`  ${error.pointer || '(the message)'}: ${error.message}\n`);
    if (outcome.errorCount > outcome.errors.length) {
      command.write(`  … and ${outcome.errorCount - outcome.errors.length} more\n`);
    }
    return 1;
  } finally {
    await pool.close();
  }
}

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${what} ${path}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${what} ${path} is not JSON: ${(error as Error).message}`);
  }
}

async function fetchSchema(command: SchemaCheckCommand): Promise<{ schema: unknown; name: string }> {
  const { url, token } = command.api;
  if (!token)
    throw new CliError(
      'an API token is needed: --token zkt_… or ZEKT_TOKEN (zekt token create); or check against a local file with --schema',
    );
  const get = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    let response: Response;
    try {
      response = await fetch(url.replace(/\/$/, '') + path, {
        headers: { authorization: `Bearer ${token}` },
      });
    } catch (error) {
      throw new CliError(`cannot reach Zekt at ${url}: ${(error as Error).message} (set --url or ZEKT_URL)`);
    }
    return {
      status: response.status,
      body: (await response.json().catch(() => ({}))) as Record<string, unknown>,
    };
  };
  const service = command.service!;
  const query = command.version ? `?version=${encodeURIComponent(command.version)}` : '';
  let id = service;
  if (!service.startsWith('svc_')) {
    // A slug: one of the caller's services, else one the Directory shows.
    const own = await get(`/api/v1/services?limit=100`);
    const mine = (own.body.services as Array<{ id: string; slug: string }> | undefined)?.find(
      (s) => s.slug === service,
    );
    const listed = mine
      ? undefined
      : (
          (await get(`/api/v1/directory?q=${encodeURIComponent(service)}&limit=100`)).body.services as
            | Array<{ id: string; slug: string }>
            | undefined
        )?.find((s) => s.slug === service);
    const found = mine ?? listed;
    if (!found) throw new CliError(`no service ${service} among yours or in the Directory`);
    id = found.id;
  }
  for (const path of [`/api/v1/services/${id}/schema${query}`, `/api/v1/directory/${id}/schema${query}`]) {
    const answer = await get(path);
    if (answer.status === 200) {
      return {
        schema: answer.body.schema,
        name: `${service} (schema version ${String(answer.body.version)})`,
      };
    }
    if (answer.status !== 404 || answer.body.code === 'schema_not_found') {
      throw new CliError(`GET ${path} answered ${answer.status}: ${String(answer.body.detail ?? '')}`);
    }
  }
  throw new CliError(`no service ${service} among yours or in the Directory`);
}
