// Runs a CommonJS file (dist/bundle/proxy.cjs) with V8's code cache: the next start of a sidecar reads
// the code its last start compiled instead of compiling ~650 KB of JavaScript again (10–15 ms of a 2-core
// machine's start: bench/README.md, "The proxy's start, third pass"). Node 22's module.enableCompileCache()
// keeps only what a module's load compiles; a cache made once the proxy serves also holds every function
// its start and first commands compiled, and Node 20 has no cache at all.
//
// Where: NODE_COMPILE_CACHE/respgate when set, else respgate-compile-cache-<uid> in the OS's temporary
// directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off (Node's own variables for its own cache). Code read
// from a cache runs as this user's, so a folder that another user owns or may write to is not used.
// Node's modules by getBuiltinModule: an import goes through the module's ES-module facade, which reads
// every export once (node:fs's `promises` loads fs/promises and readline).
const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');

/** The last line of a file that may be cached: `// respgate-build <hash of the text above it>`. */
const BUILD_LINE = /\n\/\/ respgate-build ([0-9a-f]{16,64})\n?$/;

/**
 * Node's CommonJS wrapper. scripts/bundle.mjs writes proxy.cjs inside it, so that V8 compiles the file's
 * text as read: wrapping it here made a second, flat copy of its ~650 KB (~3 ms of a start). Any other
 * file is wrapped here.
 */
export const WRAPPER = ['(function (exports, require, module, __filename, __dirname) { ', '\n})'] as const;

/** How the cache served this start. */
export type CacheUse = 'off' | 'missing' | 'accepted' | 'rejected';

export interface CachedRun {
  /** The file's `module.exports`. */
  exports: Record<string, unknown>;
  use: CacheUse;
  /** The cache file (written by `save`), when the cache is on. */
  cacheFile: string | undefined;
  /** Writes the cache when it was missing or rejected: the code compiled up to now. */
  save(): void;
}

/** The folder of the cache, or undefined when it is off or cannot be trusted. */
export function cacheDirectory(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const uid = process.getuid?.();
  const dir = env.NODE_COMPILE_CACHE
    ? path.join(env.NODE_COMPILE_CACHE, 'respgate')
    : path.join(
        process.getBuiltinModule('node:os').tmpdir(),
        uid === undefined ? 'respgate-compile-cache' : `respgate-compile-cache-${uid}`,
      );
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = fs.lstatSync(dir);
    const ownedByUs = uid === undefined || stat.uid === uid;
    return stat.isDirectory() && ownedByUs && (stat.mode & 0o022) === 0 ? dir : undefined;
  } catch {
    return undefined; // a read-only or missing temporary directory: no cache
  }
}

/**
 * Compiles and runs `file` as Node runs a CommonJS module (its own `require`, `module`, `__filename`),
 * with the code cache of `dir` when there is one for this very text (its build line) and this Node. A file
 * without a build line runs without a cache.
 */
export function runWithCodeCache(file: string, dir: string | undefined): CachedRun {
  const vm = process.getBuiltinModule('node:vm');
  // Read as latin1, which is what ASCII is (scripts/bundle.mjs keeps the bundle so).
  const text = fs.readFileSync(file, 'latin1');
  // V8 checks a cache against its source's length only, so the name holds a hash of the text: the build's,
  // written at its end. One cache per installed file (its path's hash): a newer build or another Node
  // replaces it, another install keeps its own.
  const build = BUILD_LINE.exec(text.slice(-100))?.[1];
  const prefix = `${path.basename(file)}-${pathHash(file)}-`;
  const cacheFile = dir && build && path.join(dir, `${prefix}${build}-${process.version}-${process.arch}.cache`);
  let cachedData: Buffer | undefined;
  try {
    if (cacheFile) cachedData = fs.readFileSync(cacheFile);
  } catch {
    // none yet
  }
  const source = text.startsWith(WRAPPER[0]) ? text : WRAPPER[0] + text + WRAPPER[1];
  // No import() in it: a script read from a code cache loses its dynamic-import callback (scripts/bundle.mjs).
  const script = new vm.Script(source, { filename: file, cachedData });
  const use: CacheUse = !cacheFile ? 'off' : !cachedData ? 'missing' : script.cachedDataRejected ? 'rejected' : 'accepted';
  const mod = { exports: {} as Record<string, unknown> };
  const require = process.getBuiltinModule('node:module').createRequire(file);
  (script.runInThisContext() as (...args: unknown[]) => void)(mod.exports, require, mod, file, path.dirname(file));
  return {
    exports: mod.exports,
    use,
    cacheFile,
    save() {
      if (!cacheFile || use === 'accepted') return; // off, or nothing new to write
      try {
        const temporary = `${cacheFile}.${process.pid}`;
        fs.writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
        fs.renameSync(temporary, cacheFile);
        for (const name of fs.readdirSync(dir!)) {
          if (name.startsWith(prefix) && name !== path.basename(cacheFile)) fs.rmSync(path.join(dir!, name), { force: true });
        }
      } catch {
        // a full disk or a folder gone: the next start compiles again
      }
    },
  };
}

/** FNV-1a of a path: a short, stable name part (node:crypto would cost a start ~7 ms). */
function pathHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}
