import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorEnvironment } from '../support/operator-environment.js';
import { ADMIN_URL, admin } from '../support/test-database.js';

/**
 * The database mistakes an operator makes with PostgreSQL, met by the built `zekt` as processes:
 * a database that does not exist, a role that does not exist, a role that may not create Zekt's
 * tables (a database it does not own). Each is one line with the command that fixes it, exit 2,
 * no stack trace — from `zekt serve`, `zekt migrate` and `zekt token create` alike; `zekt doctor`
 * says the same under its Database check.
 */
const cli = resolve(import.meta.dirname, '../../dist/cli/main.js');
const run = promisify(execFile);

const suffix = randomBytes(4).toString('hex');
const role = `zekt_norights_${suffix}`;
const foreignDatabase = `zekt_foreign_${suffix}`;

function urlFor(user: string, database: string): string {
  const url = new URL(ADMIN_URL);
  url.username = user;
  url.password = '';
  url.pathname = `/${database}`;
  return url.toString();
}

/** The settings `zekt serve` requires; the database is met before GitHub is asked anything. */
const serviceSettings = {
  GITHUB_APP_ID: '1',
  GITHUB_PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----',
  GITHUB_WEBHOOK_SECRET: 'whsec',
  ZEKT_SECRET: 'f'.repeat(64),
  PORT: '0',
};

async function zekt(args: string[], databaseUrl: string) {
  return run(process.execPath, [cli, ...args], {
    env: { ...operatorEnvironment(), ...serviceSettings, DATABASE_URL: databaseUrl },
    timeout: 30_000,
  }).then(
    (done) => ({ code: 0, ...done }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

/** Exactly one line, starting `zekt:`, and no stack frame. */
function oneLine(stderr: string): string {
  expect(stderr).not.toMatch(/^\s+at /m);
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^zekt: /);
  return lines[0]!;
}

beforeAll(async () => {
  await admin(`create role ${role} login`);
  // Owned by the administrator, not by the role Zekt connects as: since PostgreSQL 15 the role
  // may not create tables in its public schema.
  await admin(`create database ${foreignDatabase}`);
});
afterAll(async () => {
  await admin(`drop database if exists ${foreignDatabase} with (force)`);
  await admin(`drop role if exists ${role}`);
});

describe('PostgreSQL mistakes at start', () => {
  it('a database that does not exist: the createdb command, from serve, migrate and token create', async () => {
    const missing = `zekt_missing_${suffix}`;
    const url = urlFor('postgres', missing);
    const target = new URL(url);
    for (const args of [['serve'], ['migrate'], ['token', 'create', '--login', 'octocat']]) {
      const result = await zekt(args, url);
      expect(result.code, args.join(' ')).toBe(2);
      const line = oneLine(result.stderr);
      expect(line).toContain(`the database "${missing}" does not exist on ${target.hostname}:${target.port}`);
      expect(line).toContain(`createdb -h ${target.hostname} -p ${target.port} -O postgres ${missing}`);
    }
    const doctor = await zekt(['doctor', '--json'], url);
    expect(doctor.code).toBe(1);
    const database = (
      JSON.parse(doctor.stdout) as { checks: Array<{ id: string; fix: string }> }
    ).checks.find((c) => c.id === 'database');
    expect(database?.fix).toContain(`createdb -h ${target.hostname}`);
  });

  it('a role that does not exist: createuser, and giving it the database', async () => {
    const ghost = `zekt_ghost_${suffix}`;
    const result = await zekt(['serve'], urlFor(ghost, foreignDatabase));
    expect(result.code).toBe(2);
    const line = oneLine(result.stderr);
    expect(line).toContain(`the role "${ghost}" does not exist`);
    expect(line).toContain(`createuser -h `);
    expect(line).toContain(`--login --pwprompt ${ghost}`);
    expect(line).toContain(`ALTER DATABASE "${foreignDatabase}" OWNER TO "${ghost}"`);
  });

  it('a role that may not create tables in a database it does not own: make it the owner', async () => {
    const url = urlFor(role, foreignDatabase);
    const result = await zekt(['serve'], url);
    expect(result.code).toBe(2);
    const line = oneLine(result.stderr);
    expect(line).toContain(
      `the role "${role}" may not create Zekt's tables in the database "${foreignDatabase}"`,
    );
    expect(line).toContain(`ALTER DATABASE "${foreignDatabase}" OWNER TO "${role}"`);
    // zekt doctor says so too, rather than sending the operator to a zekt migrate that would fail.
    const doctor = await zekt(['doctor', '--json'], url);
    const database = (
      JSON.parse(doctor.stdout) as { checks: Array<{ id: string; summary: string; fix: string }> }
    ).checks.find((c) => c.id === 'database');
    expect(database?.summary).toContain('may not create Zekt');
    expect(database?.fix).toContain('OWNER TO');
    // And the advice works: as the owner the role migrates and serves.
    await admin(`alter database ${foreignDatabase} owner to ${role}`);
    const migrated = await zekt(['migrate'], url);
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
  });
});
