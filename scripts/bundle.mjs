// The last step of `npm run build`: bundles tsc's output (dist/cli.js and what it imports) into
// dist/bundle/, one file per role plus the chunks they share, so that starting `respgate proxy`
// reads a handful of files instead of ~100 modules (ESM resolution and module records cost start
// time and ~5 MiB of a sidecar's RSS: bench/README.md, "Sidecar startup"). The roles stay separate
// chunks, imported by their actions as in dist/ (a proxy loads no platform code). And `respgate proxy`
// once more, as one CommonJS file (proxy.cjs, below). bin/respgate runs the bundle when it is fresh,
// else dist/cli.js.
//
// Bundled: respgate's own modules and the small packages the proxy uses (BUNDLED). Left to Node:
// every other dependency (BullMQ and its Lua files, ioredis, usearch's native library, undici, which
// src/upstream/undici-pool.ts loads piece by piece), so they load from node_modules as before.
// dist/bundle/meta.json (esbuild's metafile) says which module went into which file
// (test/startup.test.ts reads it).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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
 * name fails the build). Each name is read only if the bundle uses it (a pure read, which esbuild drops
 * when unused): a newer Node may have made a plain value a deprecated getter (node:fs's F_OK on Node 24),
 * and reading it would print a warning. A CommonJS stand-in would do too, but esbuild then copies every
 * export of the module into a getter for each module that imports it (~35 copies at a proxy's start),
 * and each use on the hot path (`performance.now()`) calls that getter.
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
      // (Two names no module of Node's exports.)
      const exports = names.map((name) => `export const ${name} = /* @__PURE__ */ __read(${JSON.stringify(name)});\n`).join('');
      return {
        contents: `const __module = require(${id});\nconst __read = (name) => __module[name];\nexport default __module;\n${exports}`,
        loader: 'js',
      };
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
  for (const name of readdirSync(dir).filter((n) => /\.c?js$/.test(n))) {
    const file = path.join(dir, name);
    const text = readFileSync(file, 'utf8');
    if (/[\u0080-\uffff]/.test(text)) writeFileSync(file, text.replace(/[\u0080-\uffff]/g, '?'));
  }
}

/** What both builds share: the program from tsc's output, for this package's oldest Node. */
const common = {
  absWorkingDir: root,
  entryPoints: [path.join(dist, 'cli.js')],
  bundle: true,
  platform: 'node',
  target: `node${pkg.engines.node.replace(/^>=\s*/, '')}`,
  sourcemap: true,
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
};

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  ...common,
  outdir,
  splitting: true,
  format: 'esm',
  external,
  // Node's modules are required (builtinsByRequire), and the bundled CommonJS packages require theirs: give each chunk a require.
  banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
  plugins: [ownUrl, builtinsByRequire],
});

/**
 * `respgate proxy`, the sidecar, also as one CommonJS file with the program (dist/bundle/proxy.cjs):
 * bin/respgate runs it through V8's code cache (src/cli/code-cache.ts), and one script compiles faster
 * than the same code as a graph of ES modules (a few ms sooner ready on a 2-core machine, 10-15 more with
 * the cache: bench/README.md, "The proxy's start, third pass"). The other roles are not in it: their
 * import gives a module whose run says so. prom-client and what it uses stay in node_modules, required at
 * the first scrape of /metrics (in the ES-module bundle they are a chunk of their own).
 */
const proxyRoleOnly = {
  name: 'proxy-role-only',
  setup(b) {
    b.onResolve({ filter: /^\.\/roles\/[\w-]+\.js$/ }, (args) =>
      args.path === './roles/proxy.js' ? undefined : { path: args.path, namespace: 'other-role' },
    );
    b.onLoad({ filter: /.*/, namespace: 'other-role' }, (args) => ({
      contents: `export async function run() { throw new Error(${JSON.stringify(`dist/bundle/proxy.cjs runs the proxy role only, not ${args.path}: start respgate with bin/respgate`)}); }`,
      loader: 'js',
    }));
  },
};
/**
 * A package imported on use (prom-client, at the first scrape of /metrics) is required there instead: V8
 * loses a script's dynamic-import callback when it is read from a code cache ("A dynamic import callback
 * was not specified", Node 20-24), and Node's main-context loader for vm scripts is experimental (it
 * warns). The import() becomes a bundled module that requires the package; the build fails if any import()
 * is left.
 */
const requiredOnUse = {
  name: 'required-on-use',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.kind === 'dynamic-import' ? { path: args.path, namespace: 'required-on-use' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'required-on-use' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};
const proxyResult = await build({
  ...common,
  outfile: path.join(outdir, 'proxy.cjs'),
  format: 'cjs',
  external: [...external, 'prom-client'],
  // A module's own place (ownUrl) is resolved from the file's, as in the ES-module bundle.
  define: { 'import.meta.url': 'importMetaUrl' },
  // Strict as the ES modules are: the directive must come first, before the banner's line.
  banner: { js: "'use strict';\nconst importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  plugins: [proxyRoleOnly, requiredOnUse, ownUrl, builtinsByRequire],
});
// What runs proxy.cjs through the code cache, for bin/respgate (CommonJS: an ES module would need Node's
// ES-module loader, a few ms of the start).
const runnerResult = await build({
  ...common,
  entryPoints: [path.join(dist, 'cli', 'code-cache.js')],
  outfile: path.join(outdir, 'code-cache.cjs'),
  format: 'cjs',
});
const builds = [result, proxyResult, runnerResult];
const meta = {
  inputs: Object.assign({}, ...builds.map((b) => b.metafile.inputs)),
  outputs: Object.assign({}, ...builds.map((b) => b.metafile.outputs)),
};
writeFileSync(path.join(outdir, 'meta.json'), JSON.stringify(meta));
asciiOnly(outdir);
// The proxy's file ends with a hash of its text: the name of its code cache (src/cli/code-cache.ts).
const proxyFile = path.join(outdir, 'proxy.cjs');
// Inside Node's CommonJS wrapper already, so that the runner compiles the text as it reads it (code-cache.ts).
const { WRAPPER } = await import(pathToFileURL(path.join(dist, 'cli', 'code-cache.js')).href);
const proxyText = WRAPPER[0] + readFileSync(proxyFile, 'latin1') + WRAPPER[1];
const leftImports = Object.values(proxyResult.metafile.outputs).flatMap((output) =>
  output.imports.filter((imported) => imported.kind === 'dynamic-import').map((imported) => imported.path),
);
if (leftImports.length) throw new Error(`${proxyFile} has an import() of ${leftImports.join(', ')}: see requiredOnUse`);
writeFileSync(
  proxyFile,
  `${proxyText}\n// respgate-build ${createHash('sha256').update(proxyText).digest('hex').slice(0, 32)}\n`,
  'latin1',
);
