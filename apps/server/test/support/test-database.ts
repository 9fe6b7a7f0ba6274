import { createHash, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openStore } from '../../src/store/store.js';

/**
 * Which store a suite runs on: SQLite in the `unit`, `integration` and `e2e` projects, PostgreSQL in
 * `postgres`, which runs the suites whose result depends on the store again (vitest.config.ts); each
 * PostgreSQL run creates and drops its own databases on the local server.
 */
export const TEST_STORE: 'sqlite' | 'postgres' =
  process.env.ZEKT_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

/** The test server's administrator (trust authentication): creates and drops the test databases. */
export const ADMIN_URL = process.env.ZEKT_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * A fresh, empty PostgreSQL database; `drop` removes it (with any connection still open to it).
 * For the tests of the migrations themselves: everything else takes `createMigratedTestDatabase`.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `zekt_test_${randomBytes(6).toString('hex')}`;
  await admin(`create database ${name}`);
  return testDatabase(name);
}

/**
 * A fresh PostgreSQL database with every migration applied, copied from a template database
 * (`create database … template …` takes a fraction of what running the migrations takes, and a
 * test run creates hundreds of databases). A process started on it finds nothing to migrate.
 */
export async function createMigratedTestDatabase(): Promise<TestDatabase> {
  const template = await migratedTemplate();
  const name = `zekt_test_${randomBytes(6).toString('hex')}`;
  await admin(`create database ${name} template ${template}`);
  return testDatabase(name);
}

function testDatabase(name: string): TestDatabase {
  return {
    url: databaseUrl(name),
    name,
    drop: () => admin(`drop database if exists ${name} with (force)`),
  };
}

const TEMPLATE_PREFIX = 'zekt_tpl_';
// Any fixed number: every test process (and every worktree's test run on this server) building or
// pruning templates takes the same lock, so two of them never build the same template at once.
const TEMPLATE_LOCK = 7_265_001;
// A template another test run (of other migrations: a different checkout) still uses is touched
// by each of its test files; one nobody touched for this long belongs to migrations that are gone.
const STALE_TEMPLATE_MS = 60 * 60 * 1000;

let template: Promise<string> | undefined;

/** The template's name, built on first use in this process (once per server and set of migrations). */
function migratedTemplate(): Promise<string> {
  template ??= prepareTemplate().catch((error) => {
    template = undefined;
    throw error;
  });
  return template;
}

async function prepareTemplate(): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${migrationsHash()}`;
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    const existing = await client.query<{ datname: string; used: string | null }>(
      `select datname, shobj_description(oid, 'pg_database') as used from pg_database where datname like $1`,
      [`${TEMPLATE_PREFIX}%`],
    );
    if (!existing.rows.some((row) => row.datname === name)) {
      // Built under another name and renamed when complete: a run that dies half-way leaves no
      // half-migrated template behind under the name the others copy.
      const building = `zekt_build_${randomBytes(6).toString('hex')}`;
      await client.query(`create database ${building}`);
      try {
        const store = await openStore({ kind: 'postgres', url: databaseUrl(building), poolSize: 1 });
        try {
          await store.migrate();
        } finally {
          await store.close();
        }
        await client.query(`alter database ${building} rename to ${name}`);
      } catch (error) {
        await client.query(`drop database if exists ${building} with (force)`);
        throw error;
      }
    }
    await client.query(`comment on database ${name} is '${Date.now()}'`);
    for (const row of existing.rows) {
      if (row.datname === name || Date.now() - Number(row.used ?? 0) < STALE_TEMPLATE_MS) continue;
      // Nobody copies a template that old; should one still, the drop waits or fails, and the
      // next test run drops it.
      await client.query(`drop database if exists ${row.datname}`).catch(() => undefined);
    }
  } finally {
    await client.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK]).catch(() => undefined);
    await client.end();
  }
  return name;
}

let sqliteTemplate: Promise<string> | undefined;

/**
 * Writes a SQLite file with every migration applied at `path`, copied from a migrated template:
 * copying a file takes a fraction of what running the migrations takes, and the harness builds a
 * store for nearly every test. A service opened on it finds nothing to migrate.
 */
export async function copyMigratedSqlite(path: string): Promise<void> {
  sqliteTemplate ??= migratedSqlite().catch((error) => {
    sqliteTemplate = undefined;
    throw error;
  });
  copyFileSync(await sqliteTemplate, path);
}

/**
 * The template, one file per set of migrations, shared by every test process: the first to need
 * it migrates a file of its own and renames it into place, so none ever copies a half-built one.
 */
async function migratedSqlite(): Promise<string> {
  const template = join(tmpdir(), `zekt-template-${migrationsHash(['engine/sqlite.ts'])}.db`);
  if (existsSync(template)) return template;
  const dir = mkdtempSync(join(tmpdir(), 'zekt-template-'));
  try {
    const path = join(dir, 'zekt.db');
    const store = await openStore({ kind: 'sqlite', path });
    try {
      await store.migrate();
    } finally {
      // Closing the last connection checkpoints the WAL into the file: the copy is the whole store.
      await store.close();
    }
    renameSync(path, template);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return template;
}

/**
 * What the template holds depends on the migrations' source and the dialect helpers they use
 * (and on how the store opens a file, for `extra` such as engine/sqlite.ts).
 */
function migrationsHash(extra: string[] = []): string {
  const store = fileURLToPath(new URL('../../src/store', import.meta.url));
  const migrations = join(store, 'migrations');
  const files = [
    ...readdirSync(migrations)
      .filter((file) => file.endsWith('.ts'))
      .sort()
      .map((file) => join(migrations, file)),
    join(store, 'engine', 'dialect.ts'),
    ...extra.map((file) => join(store, file)),
  ];
  const hash = createHash('sha256');
  for (const file of files) hash.update(file.slice(store.length)).update('\0').update(readFileSync(file));
  return hash.digest('hex').slice(0, 16);
}

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one statement as the administrator (databases, roles). */
export async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
