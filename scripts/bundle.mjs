// The last step of `npm run build`: bundles tsc's output (dist/cli.js and what it imports) into
// dist/bundle/, one file per role plus the chunks they share, so that starting `respgate proxy`
// reads a handful of files instead of ~100 modules (ESM resolution and module records cost start
// time and ~5 MiB of a sidecar's RSS: bench/README.md, "Sidecar startup"). The roles stay separate
// chunks, imported by their actions as in dist/ (a proxy loads no platform code). bin/respgate runs
// the bundle when it is fresh, else dist/cli.js.
//
// Bundled: respgate's own modules and the small packages the proxy uses (BUNDLED). Left to Node:
// every other dependency (BullMQ and its Lua files, ioredis, usearch's native library, undici, which
// src/upstream/undici-pool.ts loads piece by piece), so they load from node_modules as before.
// dist/bundle/meta.json (esbuild's metafile) says which module went into which file
// (test/startup.test.ts reads it).
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const outdir = path.join(dist, 'bundle');
const BUNDLED = ['commander', 'eventsource-parser', 'prom-client'];
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const external = Object.keys(pkg.dependencies).filter((d) => !BUNDLED.includes(d));

/**
 * A module that finds files beside itself (`new URL('./static/', import.meta.url)`: the console's
 * pages, package.json, the JSON library's Lua) must still find them from a chunk in dist/bundle/:
 * its `import.meta.url` becomes its own place in dist/.
 */
const ownUrl = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!args.path.startsWith(dist + path.sep) || !text.includes('import.meta.url')) return undefined;
      const own = path.relative(outdir, args.path).split(path.sep).join('/');
      return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`), loader: 'js' };
    });
  },
};

/**
 * Node's own modules are required, not imported. An ES-module import of one goes through its ES-module
 * facade, which reads every export once, the lazy ones too: node:fs's `promises` loads fs/promises and
 * readline, node:crypto's `webcrypto` a dozen crypto modules, node:net's `BlockList` its own. Each
 * becomes a small ES module of the bundle that requires it and exports its plain values by name (the
 * names Node gives when the bundle is built; getters, the lazy exports, are left out: importing one by
 * name fails the build). A CommonJS stand-in would do too, but esbuild then copies every export of the
 * module into a getter for each module that imports it (~35 copies at a proxy's start), and each use on
 * the hot path (`performance.now()`) calls that getter.
 */
const requireHere = createRequire(import.meta.url);
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(b) {
    // A bundled CommonJS package's require stays one (it gets the module itself, getters and all).
    b.onResolve({ filter: /^node:/ }, (args) =>
      args.namespace === 'builtin' || args.kind === 'require-call'
        ? { path: args.path, external: true }
        : { path: args.path, namespace: 'builtin' },
    );
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => {
      const mod = requireHere(args.path);
      const names = Object.entries(Object.getOwnPropertyDescriptors(mod))
        .filter(([name, d]) => 'value' in d && name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name))
        .map(([name]) => name);
      const id = JSON.stringify(args.path);
      return { contents: `const m = require(${id});\nexport default m;\nexport const { ${names.join(', ')} } = m;\n`, loader: 'js' };
    });
  },
};

/**
 * The bundle's text is ASCII. esbuild writes strings, identifiers and regular expressions in ASCII
 * (`charset: 'ascii'`, its default) but keeps the comments it preserves as they are written, and one
 * arrow or ellipsis in a comment makes Node decode the whole file the slow way and V8 keep it as a
 * two-byte string (twice the memory). Each other UTF-16 unit in a comment becomes '?' (the same width:
 * the source maps still fit).
 */
function asciiOnly(dir) {
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    const file = path.join(dir, name);
    const text = readFileSync(file, 'utf8');
    if (/[\u0080-\uffff]/.test(text)) writeFileSync(file, text.replace(/[\u0080-\uffff]/g, '?'));
  }
}

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: [path.join(dist, 'cli.js')],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: `node${pkg.engines.node.replace(/^>=\s*/, '')}`,
  external,
  // Node's modules are required (builtinsByRequire), and the bundled CommonJS packages require theirs: give each chunk a require.
  banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
  plugins: [ownUrl, builtinsByRequire],
  sourcemap: true,
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});
writeFileSync(path.join(outdir, 'meta.json'), JSON.stringify(result.metafile));
asciiOnly(outdir);
