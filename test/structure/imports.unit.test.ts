// The structure of src/ stays as it is made: no import cycle (type-only imports count: they tie
// modules together as much for a reader), and the room rules of DESIGN.md hold, directly and
// through other modules.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { breaches, buildGraph, findCycles, importsOf, reachable, type RoomRule } from './import-graph.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// Cycles known today and tolerated until the change that removes them lands. None now: the one
// connection core of issue 20 removed the sideports/command-spec.ts → connection.ts cycle. A cycle
// listed here that no longer exists fails the test too, so the list cannot go stale.
const KNOWN_CYCLES: string[] = [];

const HTTP = new Set(['undici', 'node:http', 'node:https', 'http', 'https', 'node:http2', 'http2']);
const SOCKETS = new Set(['node:net', 'node:tls', 'net', 'tls', 'node:dgram', 'dgram']);

const UPSTREAM_CONNECTOR = 'src/upstream/tcp-connector.ts';

const RULES: RoomRule[] = [
  { room: 'src/resp/', forbidden: (t) => HTTP.has(t), why: 'resp/ knows no HTTP' },
  {
    room: 'src/upstream/',
    // The one exception: the HTTP client's own TCP connections to the upstream (docs/decisions.md, 2026-11-28).
    forbidden: (t, via) => SOCKETS.has(t) && !via.includes(UPSTREAM_CONNECTOR),
    why: 'upstream/ knows no sockets',
  },
  {
    room: 'src/proxy/',
    forbidden: (t) => t.startsWith('src/platform/'),
    why: 'proxy/ reaches the platform only over HTTP through upstream/',
  },
  {
    room: 'src/sideports/',
    forbidden: (t) => t.startsWith('src/platform/'),
    why: 'sideports/ reach the platform only over HTTP through upstream/',
  },
  {
    room: 'src/server/',
    forbidden: (t) => t.startsWith('src/proxy/') || t.startsWith('src/sideports/') || t.startsWith('src/platform/'),
    why: 'server/ is the core beneath every port: it never imports a port (proxy/, sideports/) or the platform',
  },
  {
    room: 'src/platform/',
    forbidden: (t) => t.startsWith('src/proxy/') || t.startsWith('src/sideports/'),
    why: 'platform/ never imports proxy/ or sideports/',
  },
  {
    room: 'src/console/',
    forbidden: (t) => t.startsWith('src/platform/') || t.startsWith('src/proxy/') || t.startsWith('src/sideports/'),
    why: 'console/ is shared by the platform and `respgate proxy`: it reads the proxy over RESP, never by import',
  },
];

describe('the import graph of src/', () => {
  const graph = buildGraph(root);

  it('is read whole: every module of src/proxy and its imports are seen', () => {
    expect(graph.edges.size).toBeGreaterThan(50);
    expect(graph.edges.get('src/proxy/server.ts')).toEqual(
      expect.arrayContaining(['src/server/listener.ts', 'src/proxy/session.ts', 'src/config.ts']),
    );
    expect(graph.edges.get('src/server/listener.ts')).toEqual(expect.arrayContaining(['node:net', 'node:tls']));
    // Every relative import resolves to a module of src/ (a typo or a moved file would hide edges).
    for (const [module, targets] of graph.edges) {
      for (const t of targets)
        if (t.startsWith('src/'))
          expect(graph.edges.has(t) || (!t.endsWith('.ts') && existsSync(path.join(root, t))), `${module} imports ${t}`).toBe(true);
    }
  });

  it('has no cycle but the known ones, and each known one still exists', () => {
    const cycles = findCycles(graph.edges).map((c) => c.join(' → '));
    expect(cycles.filter((c) => !KNOWN_CYCLES.includes(c))).toEqual([]);
    expect(
      KNOWN_CYCLES.filter((c) => !cycles.includes(c)),
      'no longer a cycle: remove it from KNOWN_CYCLES',
    ).toEqual([]);
  });

  it('keeps the room rules of DESIGN.md', () => {
    expect(breaches(graph, RULES)).toEqual([]);
  });

  it("every RESP listener and connection is server/'s: proxy/ and sideports/ import no socket module themselves", () => {
    const direct = [...graph.edges]
      .filter(([m]) => m.startsWith('src/proxy/') || m.startsWith('src/sideports/'))
      .flatMap(([m, targets]) => targets.filter((t) => SOCKETS.has(t)).map((t) => `${m} → ${t}`));
    expect(direct).toEqual([]);
    // And sideports/ hold no connection handling of their own.
    expect(existsSync(path.join(root, 'src/sideports/connection.ts'))).toBe(false);
  });

  it('in proxy/, only server.ts imports session.ts', () => {
    const importers = [...graph.edges].filter(([, targets]) => targets.includes('src/proxy/session.ts')).map(([m]) => m);
    expect(importers).toEqual(['src/proxy/server.ts']);
  });

  it.each(['src/proxy', 'src/server'])('%s holds no module state: no top-level let/var, no WeakMap or Map filled from outside', (room) => {
    const dir = path.join(root, room);
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const source = readFileSync(path.join(dir, f), 'utf8');
      expect(source, f).not.toMatch(/^(let|var)\s/m);
      expect(source, f).not.toMatch(/^(export\s+)?const\s+\w+\s*(:[^=]+)?=\s*new\s+(Weak)?Map\b/m);
    }
  });
});

describe('the quick tests (*.unit.test.ts, `npm run test:unit`)', () => {
  // src/, test/ and scripts/ (some tests start redis-server through scripts/gen-command-data.ts).
  const edges = new Map([...buildGraph(root, 'src').edges, ...buildGraph(root, 'test').edges, ...buildGraph(root, 'scripts').edges]);
  const spawns = (module: string) => [...reachable(edges, module)].find(([target]) => /^(node:)?child_process$/.test(target))?.[1];
  const tests = [...edges.keys()].filter((m) => m.endsWith('.test.ts'));
  const unit = tests.filter((m) => m.endsWith('.unit.test.ts'));

  it('start no process: none reaches child_process through its imports', () => {
    expect(unit.length).toBeGreaterThan(10);
    for (const m of unit) expect(spawns(m), m).toBeUndefined();
  });

  it('the check sees the tests that do start processes', () => {
    expect(spawns('test/proxy/batcher.test.ts')).toContain('node:child_process');
    expect(spawns('test/commands/table.test.ts')).toEqual(expect.arrayContaining(['scripts/gen-command-data.ts']));
    expect(tests.filter((m) => spawns(m) !== undefined).length).toBeGreaterThan(50);
  });
});

describe('the checks themselves', () => {
  it('read static, type-only, re-export and dynamic imports, and skip comments and strings', () => {
    const source = [
      "import a from './a.js';",
      "import type { B } from './b.js';",
      "import { c,\n  d } from './c.js';",
      "export { e } from './e.js';",
      "export * from './f.js';",
      "import './side-effect.js';",
      "const g = await import('./g.js');",
      "type H = typeof import('./h.js');",
      "import i = require('./i.js');",
      "export type { J } from './j.js';",
      "// import x from './commented.js';",
      "/* import y from './block.js'; */",
      'const s = \'import z from "./in-string.js"\'; // a string, not an import',
      'const t = `import w from "./in-template.js" ${s}`;',
      'const u = await import(name); // not a literal: nothing to follow',
    ].join('\n');
    expect(importsOf(source)).toEqual([
      './a.js',
      './b.js',
      './c.js',
      './e.js',
      './f.js',
      './side-effect.js',
      './g.js',
      './h.js',
      './i.js',
      './j.js',
    ]);
  });

  it('are not fooled by comment openers inside comments and strings (the src/commands/*.json case)', () => {
    const source = [
      "// Like Redis' src/commands/*.json: data, not code.",
      "import { a } from './a.js';",
      "const glob = 'src/*.ts';",
      "import type { B } from './b.js';",
      '/* closes here */',
      "export { c } from './c.js';",
    ].join('\n');
    expect(importsOf(source)).toEqual(['./a.js', './b.js', './c.js']);
  });

  it('find a circle planted behind such a comment, in files on disk', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'respgate-imports-'));
    try {
      mkdirSync(path.join(dir, 'src/ports'), { recursive: true });
      writeFileSync(
        path.join(dir, 'src/ports/spec.ts'),
        [
          "// Commands as data, like Redis' src/commands/*.json: arity, flags, arguments.",
          "import type { Conn } from './conn.js';",
          'export interface Call { conn: Conn } // the closing */ of nothing',
        ].join('\n'),
      );
      writeFileSync(path.join(dir, 'src/ports/conn.ts'), "import type { Call } from './spec.js';\nexport class Conn { last?: Call }\n");
      writeFileSync(path.join(dir, 'src/ports/leaf.ts'), "import { Conn } from './conn.js';\nexport const c = new Conn();\n");
      const planted = buildGraph(dir);
      expect(planted.edges.get('src/ports/spec.ts')).toEqual(['src/ports/conn.ts']);
      expect(findCycles(planted.edges)).toEqual([['src/ports/conn.ts', 'src/ports/spec.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('find a cycle, however long, once', () => {
    const edges = new Map([
      ['a', ['b', 'node:net']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(findCycles(edges)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(
      findCycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('find a rule broken through another module', () => {
    const graph = {
      edges: new Map([
        ['src/resp/x.ts', ['src/util/y.ts']],
        ['src/util/y.ts', ['undici']],
        ['src/platform/p.ts', ['src/proxy/q.ts']],
        ['src/proxy/q.ts', []],
      ]),
    };
    expect(breaches(graph, RULES)).toEqual([
      'src/resp/x.ts: resp/ knows no HTTP (src/resp/x.ts → src/util/y.ts → undici)',
      'src/platform/p.ts: platform/ never imports proxy/ or sideports/ (src/platform/p.ts → src/proxy/q.ts)',
    ]);
  });
});
