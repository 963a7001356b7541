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
 * readline, node:crypto's `webcrypto` a dozen crypto modules, node:net's `BlockList` its own.
 */
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) =>
      args.namespace === 'builtin' ? { path: args.path, external: true } : { path: args.path, namespace: 'builtin' },
    );
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
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
