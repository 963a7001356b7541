// Issue 25: the proxy is a sidecar, so `respgate proxy` loads the proxy and nothing of the other
// roles: no module of src/platform/, no BullMQ, no vector library (usearch), no ioredis. Checked
// twice: the static import graph that starting the role implies (read with the TypeScript compiler),
// and the modules a real `respgate proxy` process resolves (a loader hook records them). And Node's own
// modules that a ready proxy has loaded: none of those it needs only on some paths (http, tls, crypto).
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { runRespgate, startRespgate, stopRespgate } from './helpers/respgate-cli.js';

const root = path.resolve(import.meta.dirname, '..');
const FORBIDDEN_PACKAGES = ['bullmq', 'usearch', 'ioredis'];

/**
 * The modules a file loads when it is imported: its static imports and re-exports, not `import()`
 * calls (they run later, if at all) and not type-only ones (compilation drops them). An import
 * without `type` whose names are used only as types is counted too: the check errs on the strict side.
 */
function staticImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
  const out: string[] = [];
  for (const s of source.statements) {
    if (!(ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) || !s.moduleSpecifier || !ts.isStringLiteral(s.moduleSpecifier)) continue;
    if (ts.isImportDeclaration(s) ? typeOnlyImport(s) : s.isTypeOnly) continue;
    out.push(s.moduleSpecifier.text);
  }
  return out;
}

/** `import type { A }`, or `import { type A, type B }` (which TypeScript drops as well). */
function typeOnlyImport(s: ts.ImportDeclaration): boolean {
  const clause = s.importClause;
  if (!clause) return false; // import './side-effect.js'
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return (
    !clause.name &&
    named !== undefined &&
    ts.isNamedImports(named) &&
    named.elements.length > 0 &&
    named.elements.every((e) => e.isTypeOnly)
  );
}

/** Every module reached from `entries` (paths under the root), and the packages they import. */
function staticGraph(...entries: string[]): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const todo = entries.map((e) => path.join(root, e));
  while (todo.length) {
    const file = todo.pop()!;
    if (modules.has(file)) continue;
    modules.add(file);
    if (!file.endsWith('.ts')) continue; // a JSON data file
    for (const spec of staticImports(file)) {
      if (spec.startsWith('.')) {
        const target = path.resolve(path.dirname(file), spec);
        const ts = target.replace(/\.js$/, '.ts');
        todo.push(existsSync(ts) ? ts : target);
      } else if (!spec.startsWith('node:')) {
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
      }
    }
  }
  return { modules: new Set([...modules].map((m) => path.relative(root, m))), packages };
}

/** One PING to the proxy whose banner is `output`: it answers PONG. */
async function expectPong(output: string): Promise<void> {
  const port = Number(/proxy ready on redis:\/\/[^:]+:(\d+)/.exec(output)![1]);
  const socket = net.connect(port, '127.0.0.1');
  socket.write('PING\r\n');
  expect((await once(socket, 'data'))[0].toString()).toBe('+PONG\r\n');
  socket.destroy();
}

describe('what the proxy role loads', () => {
  it('its static module graph (entry, program, role) reaches no platform module and none of BullMQ, usearch, ioredis', () => {
    const { modules, packages } = staticGraph('src/cli.ts', 'src/cli/roles/proxy.ts');
    expect(modules).toContain('src/proxy/server.ts');
    expect([...modules].filter((m) => m.startsWith('src/platform/') || m.startsWith('src/sideports/'))).toEqual([]);
    expect([...packages].filter((p) => FORBIDDEN_PACKAGES.includes(p))).toEqual([]);
    // undici's index (fetch, WebSocket… and Node's bundled copy: 7.7 MiB) neither: src/upstream/undici-pool.ts.
    expect(modules).toContain('src/upstream/undici-pool.ts');
    expect(packages).not.toContain('undici');
  });

  it('the program loads no role until it runs: the roles are imported by their actions', () => {
    const { modules } = staticGraph('src/cli.ts');
    expect(modules).toContain('src/cli/options.ts');
    // Beyond cli/: config.ts (the parsers), version.ts (--version: package.json's, read with node:fs alone),
    // server/output-limits.ts (the parser of Redis' client-output-buffer-limit syntax; it imports nothing) and
    // crypto-on-use.ts (node:crypto for the token generators, at their first call; it imports nothing).
    const shared = ['src/config.ts', 'src/version.ts', 'src/server/output-limits.ts', 'src/crypto-on-use.ts'];
    expect([...modules].filter((m) => m.startsWith('src/cli/roles/') || (!m.startsWith('src/cli') && !shared.includes(m)))).toEqual([]);
  });

  it('the side-port roles load neither the platform nor its packages either', () => {
    for (const role of ['vector', 'queue']) {
      const { modules, packages } = staticGraph('src/cli.ts', `src/cli/roles/${role}.ts`);
      expect(modules, role).toContain(`src/sideports/${role}-port.ts`);
      expect(
        [...modules].filter((m) => m.startsWith('src/platform/') || m.startsWith('src/proxy/')),
        role,
      ).toEqual([]);
      expect(
        [...packages].filter((p) => FORBIDDEN_PACKAGES.includes(p)),
        role,
      ).toEqual([]);
    }
  });

  it('the same reading sees what the dev role loads (the check can fail)', () => {
    const { modules, packages } = staticGraph('src/cli/roles/dev.ts');
    expect(modules).toContain('src/platform/platform.ts');
    for (const p of FORBIDDEN_PACKAGES) expect(packages).toContain(p);
  });

  /** The code cache of `respgate proxy` (src/cli/code-cache.ts) in `dir`, once written: its files. */
  function proxyCodeCache(dir: string): string[] {
    return existsSync(path.join(dir, 'respgate')) ? readdirSync(path.join(dir, 'respgate')).filter((n) => n.startsWith('proxy.cjs-')) : [];
  }

  /**
   * The modules a real `respgate proxy` loads, chunks of the bundle read as the modules in them: those it
   * resolves as ES modules (a loader hook records them), the CommonJS files it requires (require's cache),
   * and dist/bundle/proxy.cjs when it ran from it (compiled by bin/respgate, seen by the code cache it writes).
   */
  async function modulesOfRunningProxy(env: Record<string, string> = {}): Promise<{ urls: string[]; chunks: string[] }> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-startup-'));
    const trace = path.join(dir, 'modules.txt');
    const loaded = path.join(dir, 'loaded.txt');
    const { child } = await startRespgate(
      ['proxy', '--port', '0', '--upstream-url', 'http://127.0.0.1:1', '--upstream-token', 'x'],
      /proxy ready on redis:/,
      {
        NODE_OPTIONS: `--import ${path.join(root, 'test/helpers/module-trace/register.mjs')} --require ${path.join(root, 'test/helpers/module-trace/loaded.cjs')}`,
        RESPGATE_MODULE_TRACE: trace,
        RESPGATE_LOADED_TRACE: loaded,
        NODE_COMPILE_CACHE: dir,
        ...env,
      },
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500)); // the code cache is written 1 s after the start
      const required = readFileSync(loaded, 'utf8')
        .split('\n')
        .filter((m) => path.isAbsolute(m))
        .map((m) => pathToFileURL(m).href);
      const resolved = [...new Set([...readFileSync(trace, 'utf8').trim().split('\n'), ...required])];
      // scripts/bundle.mjs writes esbuild's metafile: which module went into which file of dist/bundle/.
      const ranProxyBundle = proxyCodeCache(dir).length > 0 ? [pathToFileURL(path.join(root, 'dist/bundle/proxy.cjs')).href] : [];
      const chunks = [...resolved.filter((u) => u.includes('/dist/bundle/')), ...ranProxyBundle];
      const meta = chunks.length
        ? (JSON.parse(readFileSync(path.join(root, 'dist/bundle/meta.json'), 'utf8')) as {
            outputs: Record<string, { inputs: Record<string, unknown> }>;
          })
        : undefined;
      const inside = chunks.flatMap((u) =>
        Object.keys(meta!.outputs[path.relative(root, fileURLToPath(u))].inputs).map((i) => pathToFileURL(path.join(root, i)).href),
      );
      return { urls: [...resolved, ...inside], chunks };
    } finally {
      await stopRespgate(child);
      rmSync(dir, { recursive: true, force: true });
    }
  }

  function expectNoOtherRole(urls: string[]): void {
    expect(urls.some((u) => /\/(src|dist)\/proxy\/server\.(ts|js)$/.test(u))).toBe(true);
    expect(urls.filter((u) => /\/(src|dist)\/(platform|sideports)\//.test(u))).toEqual([]);
    expect(urls.filter((u) => FORBIDDEN_PACKAGES.some((p) => u.includes(`/node_modules/${p}/`)))).toEqual([]);
    // prom-client loads on the first scrape of /metrics (src/metrics.ts), the logger is our own (src/logger.ts).
    expect(urls.filter((u) => /\/node_modules\/(prom-client|pino)\//.test(u))).toEqual([]);
  }

  it('a running `respgate proxy` (the bundle, as built) loads no module of dist/platform/, none of those packages, nor prom-client or pino', async () => {
    const { urls, chunks } = await modulesOfRunningProxy();
    // `npm run build` made the bundle and bin/respgate runs the proxy from its one CommonJS file (with the code-cache runner), no chunk of the ES-module bundle.
    expect(chunks.sort()).toEqual(
      ['dist/bundle/code-cache.cjs', 'dist/bundle/proxy.cjs'].map((f) => pathToFileURL(path.join(root, f)).href),
    );
    expectNoOtherRole(urls);
  });

  it("the proxy's CommonJS file holds no other role, and requires none of those packages", () => {
    const meta = JSON.parse(readFileSync(path.join(root, 'dist/bundle/meta.json'), 'utf8')) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>;
    };
    const inputs = Object.keys(meta.outputs['dist/bundle/proxy.cjs'].inputs);
    expect(inputs).toContain('dist/proxy/server.js');
    expect(inputs.filter((i) => /^dist\/(platform|sideports)\/|^dist\/cli\/roles\/(?!proxy\.js$)/.test(i))).toEqual([]);
    const text = readFileSync(path.join(root, 'dist/bundle/proxy.cjs'), 'utf8');
    for (const p of FORBIDDEN_PACKAGES) expect(text, p).not.toMatch(new RegExp(`(require|import)\\("${p}"\\)`));
    // The check can fail: prom-client stays in node_modules, required at the first scrape of /metrics.
    expect(text).toMatch(/require\("prom-client"\)/);
  });

  it('a second `respgate proxy` start reads the code cache the first wrote and serves as the first; NODE_DISABLE_COMPILE_CACHE=1 writes none', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-code-cache-'));
    const start = async (env: Record<string, string>) => {
      const { child, output } = await startRespgate(
        ['proxy', '--port', '0', '--metrics-port', '0', '--upstream-url', 'http://127.0.0.1:1', '--upstream-token', 'x'],
        /metrics: http:\/\/[^:]+:\d+\/metrics/,
        { NODE_COMPILE_CACHE: dir, ...env },
      );
      let later = '';
      child.stderr!.on('data', (d: Buffer) => (later += d.toString()));
      try {
        await expectPong(output);
        // The first scrape loads prom-client (a require on use: code read from a cache has lost import()'s callback).
        const answer = await fetch(/metrics: (http:\/\/[^ ]+\/metrics)/.exec(output)![1]);
        expect(answer.status).toBe(200);
        expect(await answer.text()).toContain('respgate_process_cpu_seconds_total');
        await new Promise((resolve) => setTimeout(resolve, 1500)); // the cache is written 1 s after the start
        expect(output + later).not.toMatch(/Warning/);
      } finally {
        await stopRespgate(child);
      }
    };
    try {
      await start({ NODE_DISABLE_COMPILE_CACHE: '1' });
      expect(proxyCodeCache(dir)).toEqual([]);
      await start({});
      const [cache] = proxyCodeCache(dir);
      expect(cache).toMatch(new RegExp(`^proxy\\.cjs-[0-9a-f]{8}-[0-9a-f]{32}-${process.version}-${process.arch}\\.cache$`));
      const written = statSync(path.join(dir, 'respgate', cache)).mtimeMs;
      // V8 took it (a cache it refuses is written again), and it is the only one.
      await start({});
      expect(proxyCodeCache(dir)).toEqual([cache]);
      expect(statSync(path.join(dir, 'respgate', cache)).mtimeMs).toBe(written);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("bin/respgate's bundles (the proxy's CommonJS file, the ES-module one) answer --help and a wrong flag as tsc's modules do", async () => {
    // With no warning of Node's of their own either: a deprecated property of a Node module read by a bundle prints one (Node 24).
    for (const args of [
      ['proxy', '--help'],
      ['proxy', '--no-such-flag'],
      ['proxy', '--port', 'x'],
      ['dev', '--port', 'x'],
      ['platform', '--help'],
    ]) {
      const bundled = await runRespgate(args);
      const modules = await runRespgate(args, { RESPGATE_NO_BUNDLE: '1' });
      expect(bundled, args.join(' ')).toEqual(modules);
      expect(bundled.stdout + bundled.stderr, args.join(' ')).not.toBe('');
    }
  });

  it("the bundled proxy serves /metrics: prom-client loads at the first scrape, with Node's metrics and the proxy's", async () => {
    for (const env of [{}, { RESPGATE_NO_BUNDLE: '1' }]) {
      const { child, output } = await startRespgate(
        ['proxy', '--port', '0', '--metrics-port', '0', '--upstream-url', 'http://127.0.0.1:1', '--upstream-token', 'x'],
        /metrics: http:\/\/[^:]+:\d+\/metrics/,
        env,
      );
      try {
        const url = /metrics: (http:\/\/[^ ]+\/metrics)/.exec(output)![1];
        const answer = await fetch(url);
        expect(answer.status, JSON.stringify(env)).toBe(200);
        const body = await answer.text();
        expect(body).toContain('# TYPE respgate_process_cpu_user_seconds_total counter');
        // The process's CPU since it started (its start alone takes more than 50 ms), not since the scrape loaded prom-client.
        expect(Number(/^respgate_process_cpu_seconds_total ([\d.e-]+)$/m.exec(body)![1])).toBeGreaterThan(0.05);
        expect(body).toMatch(/^respgate_proxy_connections 0$/m);
        expect(body).toMatch(/^respgate_proxy_upstream_errors_total\{kind="timeout"\} 0$/m);
        expect(body).toContain('respgate_proxy_command_duration_seconds_bucket{le="+Inf"} 0');
      } finally {
        await stopRespgate(child);
      }
    }
  });

  /** What a running `respgate proxy <flags>` has loaded once it has served a PING: Node's own modules and the CommonJS files. */
  async function loadedByReadyProxy(flags: string[] = []): Promise<string[]> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-loaded-'));
    const trace = path.join(dir, 'loaded.txt');
    const { child, output } = await startRespgate(
      ['proxy', '--port', '0', '--upstream-url', 'http://127.0.0.1:1', '--upstream-token', 'x', ...flags],
      /the upstream does not answer yet/, // its check (the first upstream connection) is done
      { NODE_OPTIONS: `--require ${path.join(root, 'test/helpers/module-trace/loaded.cjs')}`, RESPGATE_LOADED_TRACE: trace },
    );
    try {
      await expectPong(output);
      await new Promise((resolve) => setTimeout(resolve, 150)); // the trace is written every 50 ms
      return readFileSync(trace, 'utf8').split('\n');
    } finally {
      await stopRespgate(child);
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it("a ready proxy has loaded none of Node's HTTP, TLS and crypto modules nor undici: they load on use (docs/decisions.md, 2026-11-28)", async () => {
    const loaded = await loadedByReadyProxy();
    expect(loaded).toContain('NativeModule net');
    const heavy = /^NativeModule (http|_http_\w+|tls|_tls_\w+|crypto|internal\/crypto\/.*)$|\/node_modules\/undici\//;
    expect(loaded.filter((m) => heavy.test(m))).toEqual([]);
    // The check can fail: with --metrics-port the proxy serves HTTP, so node:http is loaded.
    expect(await loadedByReadyProxy(['--metrics-port', '0'])).toContain('NativeModule http');
  });

  it('bin/respgate is a CommonJS entry: Node sets up no ES-module loader before its first line (~6 ms of a start)', async () => {
    expect(await loadedByReadyProxy()).toContain(`main ${path.join(root, 'bin/respgate')}`);
    // The check can fail: an ES module as the entry is no CommonJS main.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'respgate-entry-'));
    try {
      writeFileSync(path.join(dir, 'entry.mjs'), 'setTimeout(() => {}, 300);\n');
      const trace = path.join(dir, 'loaded.txt');
      await promisify(execFile)(
        process.execPath,
        ['--require', path.join(root, 'test/helpers/module-trace/loaded.cjs'), path.join(dir, 'entry.mjs')],
        {
          env: { ...process.env, RESPGATE_LOADED_TRACE: trace },
        },
      );
      const lines = readFileSync(trace, 'utf8').split('\n');
      expect(lines).toContain('NativeModule fs');
      expect(lines.filter((l) => l.startsWith('main '))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the same with RESPGATE_NO_BUNDLE=1 (tsc's dist/, one file a module)", async () => {
    const { urls, chunks } = await modulesOfRunningProxy({ RESPGATE_NO_BUNDLE: '1' });
    expect(chunks).toEqual([]);
    expectNoOtherRole(urls);
  });
});
