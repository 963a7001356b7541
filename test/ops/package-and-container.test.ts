// What users run: the npm package (`npm pack` → `npm install -g` into a temporary prefix → the
// `respgate` bin, with no TypeScript toolchain), and the container image, checked without a container
// engine: the Dockerfile's stages, user, entry point and health check are read from the file, the
// runtime stage's install command is run into the prefix, and the image's exact entry and health-check
// commands are run here against a real platform (the `docker run -e` variables become the process's).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { format as formatDockerfile, validate as validateDockerfile, ValidationSeverity } from 'dockerfile-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { runProcess, trackChild } from '../helpers/cleanup.js';
import { startTestPlatform } from '../helpers/platform.js';
import { effective, entryCommand, env as stageEnv, execForm, readDockerfile } from './dockerfile.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const dockerfilePath = path.join(root, 'Dockerfile');
const stages = readDockerfile(dockerfilePath);
/** dockerfile-utils' validator with every optional rule turned into an error. */
const STRICT = Object.fromEntries(
  [
    'deprecatedMaintainer',
    'directiveCasing',
    'emptyContinuationLine',
    'instructionCasing',
    'instructionCmdMultiple',
    'instructionEntrypointMultiple',
    'instructionHealthcheckMultiple',
    'instructionJSONInSingleQuotes',
    'instructionWorkdirRelative',
  ].map((rule) => [rule, ValidationSeverity.ERROR]),
);
let work: string;
let prefix: string;
let installed: string;
let platform: RunningPlatform;

/** Newest modification time under a directory. */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

beforeAll(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), 'respgate-pack-'));
  prefix = path.join(work, 'prefix');
  // `npm test` builds before the suite; build here only when dist/ is stale (a lone run of this file).
  const fresh =
    existsSync(path.join(root, 'dist/cli.js')) && statSync(path.join(root, 'dist/cli.js')).mtimeMs >= newest(path.join(root, 'src'));
  await run('npm', ['pack', '--pack-destination', work, ...(fresh ? ['--ignore-scripts'] : [])], { cwd: root });
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))!;
  // The runtime stage's own install command, into a temporary prefix instead of the image's.
  const installLine = stages
    .find((s) => s.name === 'base')!
    .instructions.find((i) => i.op === 'RUN' && i.args.includes('npm install -g'))!.args;
  const installArgs = /npm install (-g[^&]*)/
    .exec(installLine)![1]
    .trim()
    .split(/\s+/)
    .map((a) => (a.startsWith('/tmp/pack/') ? path.join(work, tarball) : a));
  await run('npm', ['install', ...installArgs, '--prefix', prefix, '--prefer-offline'], { cwd: work });
  installed = path.join(prefix, 'lib/node_modules/respgate');
  platform = await startTestPlatform();
}, 240_000);

afterAll(async () => {
  await platform?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The environment of a process started from the installed package: its bin first on the PATH. */
function envWith(vars: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RESPGATE_') && !k.startsWith('UPSTASH_')));
  return { ...clean, PATH: `${path.join(prefix, 'bin')}:${process.env.PATH}`, ...vars };
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Starts a command and resolves with its stdout once `ready` matches it. */
async function startUntil(
  argv: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: ChildProcess; out: string; err: () => string }> {
  const child = trackChild(spawn(argv[0], argv.slice(1), { env, cwd: os.tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (ready.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code} before it was ready:\n${out}\n${err}`)));
  });
  return { child, out, err: () => err };
}

function stopped(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe('the npm package', () => {
  it('installs a respgate bin that runs the compiled JavaScript, with neither src/ nor tsx', async () => {
    expect(existsSync(path.join(installed, 'dist/cli.js'))).toBe(true);
    // The bundle bin/respgate runs (scripts/bundle.mjs), without its source maps and metafile.
    expect(existsSync(path.join(installed, 'dist/bundle/cli.js'))).toBe(true);
    expect(readdirSync(path.join(installed, 'dist/bundle')).filter((f) => !/\.c?js$/.test(f))).toEqual([]);
    // And `respgate proxy`'s one CommonJS file, run through the code cache (src/cli/code-cache.ts), with the code that does it.
    expect(existsSync(path.join(installed, 'dist/bundle/proxy.cjs'))).toBe(true);
    expect(existsSync(path.join(installed, 'dist/bundle/code-cache.cjs'))).toBe(true);
    // bin/respgate is CommonJS in a package of ES modules: its own package.json says so.
    expect(JSON.parse(readFileSync(path.join(installed, 'bin/package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
    // The JSON function library's Lua parts, which tsc does not copy (the build script does).
    const luaParts = readdirSync(path.join(root, 'src/platform/kv/json/lua')).sort();
    expect(luaParts.length).toBeGreaterThan(1);
    expect(readdirSync(path.join(installed, 'dist/platform/kv/json/lua')).sort()).toEqual(luaParts);
    // The web console's page files, served from beside dist/console/static-files.js (docs/console.md).
    const consoleFiles = readdirSync(path.join(root, 'src/console/static/js')).sort();
    expect(readdirSync(path.join(installed, 'dist/console/static/js')).sort()).toEqual(consoleFiles);
    expect(existsSync(path.join(installed, 'dist/console/static/index.html'))).toBe(true);
    // The command data in its two parts (scripts/split-command-data.mjs): the table's, and the rest of the docs.
    expect(
      readdirSync(path.join(installed, 'dist/commands'))
        .filter((f) => f.endsWith('.json'))
        .sort(),
    ).toEqual(['redis-8.8.0.docs.json', 'redis-8.8.0.json']);
    expect(existsSync(path.join(installed, 'src'))).toBe(false);
    expect(existsSync(path.join(installed, 'node_modules/tsx'))).toBe(false);
    expect(existsSync(path.join(prefix, 'lib/node_modules/tsx'))).toBe(false);
    expect(JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')).dependencies.tsx).toBeUndefined();
    const { stdout } = await run('respgate', ['--help'], { env: envWith({}) });
    expect(stdout).toContain('Usage: respgate [options] [command]');
    expect(stdout).toContain('respgate proxy --help');
    const proxyHelp = (await run('respgate', ['proxy', '--help'], { env: envWith({}) })).stdout;
    expect(proxyHelp).toContain('--slowlog-log-slower-than');
  });
});

describe('the container image', () => {
  it('has a build stage, a dev target and the proxy as the default target, non-root, with health checks', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'base', 'dev', 'proxy']);
    expect(stages.at(-1)!.name).toBe('proxy'); // `docker build .` builds the last stage
    for (const target of ['dev', 'proxy']) {
      expect(effective(stages, target, 'USER'), target).toBe('node');
      expect(effective(stages, target, 'HEALTHCHECK'), target).toMatch(/CMD \["node"/);
      expect(execForm(effective(stages, target, 'ENTRYPOINT')!)).toEqual(['respgate']);
    }
    expect(execForm(effective(stages, 'proxy', 'CMD')!)).toEqual(['proxy']);
    expect(execForm(effective(stages, 'dev', 'CMD')!)).toEqual(['dev']);
    // Only the packed tarball reaches the runtime stages: no sources, no dev dependencies.
    const copies = stages.filter((s) => s.name !== 'build').flatMap((s) => s.instructions.filter((i) => i.op === 'COPY'));
    expect(copies.map((c) => c.args)).toEqual(['--from=build /tmp/pack/ /tmp/pack/']);
    expect(stages.find((s) => s.name === 'dev')!.instructions.some((i) => i.op === 'RUN' && i.args.includes('redis-server'))).toBe(true);
  });

  it("passes dockerfile-utils' validator with every rule as an error, and is formatted as its formatter does", () => {
    const text = readFileSync(dockerfilePath, 'utf8');
    expect(validateDockerfile(text, STRICT)).toEqual([]);
    expect(formatDockerfile(text, { insertSpaces: true, tabSize: 2 })).toEqual([]);
    // The validator sees what the Docker builder would refuse: a mistyped HEALTHCHECK flag, a lone COPY.
    const broken = text.replace('HEALTHCHECK --interval', 'HEALTHCHECK --interva').replace('COPY bin ./bin', 'COPY bin');
    expect(validateDockerfile(broken, STRICT).map((d) => d.message)).toEqual(
      expect.arrayContaining(['Unknown flag: interva', 'COPY requires at least two arguments']),
    );
    expect(validateDockerfile(broken, STRICT)).toHaveLength(2);
  });

  it("with the image's own 0.0.0.0 the proxy refuses to start unless clients authenticate; README's RESPGATE_REQUIREPASS starts it", async () => {
    const argv = entryCommand(stages, 'proxy');
    const image: Record<string, string> = {
      ...stageEnv(stages, 'proxy'),
      RESPGATE_PORT: '0',
      UPSTASH_REDIS_REST_URL: platform.url,
      UPSTASH_REDIS_REST_TOKEN: platform.token,
    };
    expect(image.RESPGATE_HOST).toBe('0.0.0.0');
    const refused = await runProcess(argv[0], argv.slice(1), { env: envWith({ ...image, RESPGATE_METRICS_PORT: '0' }) });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the proxy binds 0.0.0.0 (reachable from the network) and clients need no authentication');
    expect(refused.stderr).toContain('set a password with --requirepass');
    // `docker run … -e RESPGATE_REQUIREPASS respgate`, as the README shows.
    const env = envWith({ ...image, RESPGATE_METRICS_PORT: String(await freePort()), RESPGATE_REQUIREPASS: 'client-pass' });
    const { child, out } = await startUntil(argv, env, /proxy ready on redis:\/\/0\.0\.0\.0:(\d+)[\s\S]*metrics:/);
    const port = /proxy ready on redis:\/\/0\.0\.0\.0:(\d+)/.exec(out)![1];
    expect((await run('redis-cli', ['-p', port, 'GET', 'x'])).stdout).toContain('NOAUTH');
    expect((await run('redis-cli', ['-p', port, '--no-auth-warning', '-a', 'client-pass', 'SET', 'x', '1'])).stdout.trim()).toBe('OK');
    expect(await stopped(child)).toBe(0);
  });

  it('compose.yaml runs the app in the network of respgate, which binds loopback (the setting the runs below use)', () => {
    const compose = readFileSync(path.join(root, 'compose.yaml'), 'utf8');
    expect(compose).toMatch(/^ {6}RESPGATE_HOST: 127\.0\.0\.1$/m);
    expect(compose).toMatch(/^ {4}network_mode: service:respgate$/m);
    expect(compose).toMatch(/target: \$\{RESPGATE_TARGET:-proxy\}/);
    expect(stages.map((s) => s.name)).toEqual(expect.arrayContaining(['proxy', 'dev']));
  });

  it("runs the proxy stage's exact entry command and health check against a real upstream", async () => {
    const metricsPort = await freePort();
    // The image's ENV, with what `docker run -e` would set: the upstream, free ports here, and loopback
    // as compose.yaml's sidecar sets it.
    const env = envWith({
      ...stageEnv(stages, 'proxy'),
      RESPGATE_HOST: '127.0.0.1',
      RESPGATE_PORT: '0',
      RESPGATE_METRICS_PORT: String(metricsPort),
      UPSTASH_REDIS_REST_URL: platform.url,
      UPSTASH_REDIS_REST_TOKEN: platform.token,
    });
    const argv = entryCommand(stages, 'proxy');
    const { child, out } = await startUntil(argv, env, /proxy ready on redis:\/\/127\.0\.0\.1:(\d+)[\s\S]*metrics:/);
    const port = /proxy ready on redis:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1];
    expect((await run('redis-cli', ['-p', port, 'SET', 'container', 'yes'])).stdout.trim()).toBe('OK');
    expect((await run('redis-cli', ['-p', port, 'GET', 'container'])).stdout.trim()).toBe('yes');
    const health = execForm(effective(stages, 'proxy', 'HEALTHCHECK')!.replace(/^.*?CMD /, ''));
    await run(health[0], health.slice(1), { env }); // rejects on a non-zero exit
    expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(200);
    expect(await stopped(child)).toBe(0);
  });

  it("the proxy stage's warm-up writes V8's code cache, and the image's entry command starts from it", async () => {
    const warmUp = stages.find((s) => s.name === 'proxy')!.instructions.find((i) => i.op === 'RUN' && i.args.includes('proxy.cjs-'))!.args;
    // The image's /tmp is a folder of its own here.
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'respgate-warm-up-'));
    try {
      await run('sh', ['-c', warmUp.replaceAll('/tmp/', `${tmp}/`)], { env: envWith({ ...stageEnv(stages, 'base'), TMPDIR: tmp }) });
      const folder = path.join(
        tmp,
        readdirSync(tmp).find((n) => n.startsWith('respgate-compile-cache-'))!,
      );
      const cached = readdirSync(folder);
      expect(cached).toHaveLength(1);
      const cacheFile = path.join(folder, cached[0]);
      const written = readFileSync(cacheFile);
      const env = envWith({
        ...stageEnv(stages, 'proxy'),
        RESPGATE_HOST: '127.0.0.1',
        RESPGATE_PORT: '0',
        RESPGATE_METRICS_PORT: '',
        UPSTASH_REDIS_REST_URL: platform.url,
        UPSTASH_REDIS_REST_TOKEN: platform.token,
        TMPDIR: tmp,
      });
      const argv = entryCommand(stages, 'proxy');
      const { child, out } = await startUntil(argv, env, /proxy ready on redis:\/\/127\.0\.0\.1:(\d+)/);
      const port = /proxy ready on redis:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1];
      expect((await run('redis-cli', ['-p', port, 'PING'])).stdout.trim()).toBe('PONG');
      // A cache V8 accepts is not written again (src/cli/code-cache.ts); one it refused would be, 1 s after the start.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(readdirSync(folder)).toEqual(cached);
      expect(readFileSync(cacheFile).equals(written)).toBe(true);
      expect(await stopped(child)).toBe(0);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("runs the dev stage's entry command (the dev stack from the installed package) and its health check", async () => {
    const httpPort = await freePort();
    const env = envWith({
      ...stageEnv(stages, 'dev'),
      RESPGATE_HOST: '127.0.0.1',
      RESPGATE_PORT: '0',
      RESPGATE_HTTP_PORT: String(httpPort),
      RESPGATE_VECTOR_PORT: '0',
      RESPGATE_QUEUE_PORT: '0',
      RESPGATE_EPHEMERAL: '1', // its working directory is the shared temporary directory: keep nothing there
    });
    const argv = entryCommand(stages, 'dev');
    const { child, out } = await startUntil(argv, env, /Press Ctrl\+C/);
    const port = /Redis protocol \(proxy\)\s+redis:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1];
    const token = /export UPSTASH_REDIS_REST_TOKEN=(\S+)/.exec(out)![1];
    expect((await run('redis-cli', ['-p', port, 'SET', 'greeting', 'hello'])).stdout.trim()).toBe('OK');
    const rest = await fetch(`http://127.0.0.1:${httpPort}/get/greeting`, { headers: { Authorization: `Bearer ${token}` } });
    expect(await rest.json()).toEqual({ result: 'hello' });
    const health = execForm(effective(stages, 'dev', 'HEALTHCHECK')!.replace(/^.*?CMD /, ''));
    await run(health[0], health.slice(1), { env });
    expect(await stopped(child)).toBe(0);
  });
});
