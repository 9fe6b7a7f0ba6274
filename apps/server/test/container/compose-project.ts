import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = resolve(import.meta.dirname, '../../../..');

/** What `podman` and `podman-compose` printed, for a failure message. */
async function command(file: string, args: string[], options: { cwd?: string } = {}): Promise<string> {
  try {
    const { stdout } = await run(file, args, { ...options, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number };
    throw new Error(
      `${file} ${args.join(' ')} exited ${failed.code}:\n${failed.stderr ?? ''}${failed.stdout ?? ''}`.slice(
        0,
        8000,
      ),
    );
  }
}

export const podman = (...args: string[]) => command('podman', args);

/**
 * The repository's compose.yaml, unchanged, in a project directory of its own with the test's
 * override beside it: podman-compose reads the project directory's `.env` and lets it override the
 * environment, so a developer's own `.env` in the repository must not reach the test.
 */
export class ComposeProject {
  readonly name: string;
  readonly dir: string;

  constructor(name: string, override: unknown, files: Record<string, string> = {}) {
    this.name = name;
    this.dir = mkdtempSync(join(tmpdir(), `${name}-`));
    copyFileSync(join(repoRoot, 'compose.yaml'), join(this.dir, 'compose.yaml'));
    // JSON is YAML: the override carries multi-line values (a PEM key) without quoting rules.
    writeFileSync(join(this.dir, 'compose.test.json'), JSON.stringify(override, null, 2));
    for (const [file, content] of Object.entries(files)) writeFileSync(join(this.dir, file), content);
  }

  path(file: string): string {
    return join(this.dir, file);
  }

  compose(...args: string[]): Promise<string> {
    return command(
      'podman-compose',
      ['-p', this.name, '-f', 'compose.yaml', '-f', 'compose.test.json', ...args],
      { cwd: this.dir },
    );
  }

  /** The containers of one service, oldest first. */
  async containers(service: string): Promise<string[]> {
    const names = await podman(
      'ps',
      '-a',
      '--filter',
      `label=com.docker.compose.project=${this.name}`,
      '--filter',
      `label=com.docker.compose.service=${service}`,
      '--sort',
      'created',
      '--format',
      '{{.Names}}',
    );
    return names.split('\n').filter((line) => line.trim() !== '');
  }

  async container(service: string): Promise<string> {
    const [name] = await this.containers(service);
    if (!name) throw new Error(`no container for the service ${service} in ${this.name}`);
    return name;
  }

  /** The image's or the service's health check, run now: true when it passes. */
  async healthy(service: string): Promise<boolean> {
    const name = await this.container(service);
    return podman('healthcheck', 'run', name).then(
      () => true,
      () => false,
    );
  }

  /**
   * Waits until the service's health check passes, once `compose up -d` has returned. A container
   * that is not running fails at once, with its state and log: it exited, or podman could not start
   * it and left it `created` (a published port taken, say: podman-compose 1.0.3 prints podman's
   * error and exits 0).
   */
  async untilHealthy(service: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await this.state(service);
      if (!state.running)
        throw new Error(`${service} is not running: ${JSON.stringify(state)}\n${await this.logs(service)}`);
      if (await this.healthy(service)) return;
      if (Date.now() > deadline)
        throw new Error(
          `${service} not healthy within ${timeoutMs} ms: ${JSON.stringify(state)}\n${await this.logs(service)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  /** `host:port` on the host that a published container port was given. */
  async publishedAddress(service: string, containerPort: number): Promise<string> {
    const out = await podman('port', await this.container(service), `${containerPort}/tcp`);
    const address = out.trim().split('\n')[0]?.trim();
    if (!address) throw new Error(`${service} publishes no host port for ${containerPort}`);
    return address;
  }

  async state(
    service: string,
  ): Promise<{ running: boolean; exitCode: number; status: string; error: string; oomKilled: boolean }> {
    const [state] = JSON.parse(
      await podman('inspect', '--format', '{{json .State}}', await this.container(service)).then(
        (out) => `[${out.trim()}]`,
      ),
    ) as Array<{ Running: boolean; ExitCode: number; Status: string; Error?: string; OOMKilled?: boolean }>;
    return {
      running: state!.Running,
      exitCode: state!.ExitCode,
      status: state!.Status,
      error: state!.Error ?? '',
      oomKilled: state!.OOMKilled ?? false,
    };
  }

  async logs(service: string): Promise<string> {
    const names = await this.containers(service);
    const logs = await Promise.all(
      names.map((name) =>
        run('podman', ['logs', name], { maxBuffer: 64 * 1024 * 1024 }).then(
          ({ stdout, stderr }) => `--- ${name}\n${stdout}${stderr}`,
          (error: Error) => `--- ${name}: ${error.message}`,
        ),
      ),
    );
    return logs.join('\n');
  }

  /**
   * Removes the containers with their anonymous volumes (the image's /data), the named volumes and
   * the network, then the project directory. podman-compose 1.0.3's `down -v` leaves the anonymous
   * volumes and the network behind, so they are removed by name here.
   */
  async down(): Promise<void> {
    try {
      const project = `label=com.docker.compose.project=${this.name}`;
      const containers = (await podman('ps', '-a', '--quiet', '--filter', project)).split('\n');
      for (const id of containers.filter((line) => line.trim() !== '')) await removeContainer(id.trim());
      await this.compose('down', '-v');
      const volumes = await podman(
        'volume',
        'ls',
        '--quiet',
        '--filter',
        `label=io.podman.compose.project=${this.name}`,
      );
      for (const volume of volumes.split('\n').filter((line) => line.trim() !== ''))
        await podman('volume', 'rm', '--force', volume.trim());
      if ((await podman('network', 'ls', '--quiet', '--filter', `name=^${this.name}_`)).trim() !== '')
        await podman('network', 'rm', '--force', `${this.name}_default`);
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/**
 * `podman rm --force` of a container that stops by itself while podman is stopping it fails
 * ("container state improper: stopped", seen once after a worker outlived SIGTERM's 10 s): the
 * container is stopped by then, so removing it again succeeds.
 */
async function removeContainer(id: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await podman('rm', '--force', '--volumes', id);
      return;
    } catch (error) {
      if (attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
