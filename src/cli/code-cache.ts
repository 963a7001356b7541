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

/**
 * A cache file starts with this line and the path of the file it was made for (then V8's data), so that
 * a start takes only a cache of its own file and a stale one can be told from a live one.
 */
const HEADER_MAGIC = 'respgate code cache for ';

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
  const header = Buffer.from(`${HEADER_MAGIC}${path.resolve(file)}\n`);
  let cachedData: Buffer | undefined;
  try {
    const data = cacheFile ? fs.readFileSync(cacheFile) : undefined;
    // A file that names another path (a hash collision) or none (another program's) is not this file's cache.
    if (data?.subarray(0, header.length).equals(header)) cachedData = data.subarray(header.length);
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
        fs.writeFileSync(temporary, Buffer.concat([header, script.createCachedData()]), { mode: 0o600 });
        fs.renameSync(temporary, cacheFile);
        removeStaleCaches(dir!, prefix, path.basename(cacheFile));
      } catch {
        // a full disk or a folder gone: the next start compiles again
      }
    },
  };
}

/** The name of a cache file of ours: `<file name>-<path hash>-<build>-<node version>-<arch>.cache`. */
const CACHE_NAME = /-[0-9a-f]{8}-[0-9a-f]{16,64}-v[0-9.]+-[a-z0-9]+\.cache$/;

/**
 * Removes the caches no start will read again: older builds of this file (`prefix`), the caches of files
 * that are gone (an install removed, a benchmark's temporary copy), and ours without the header line (an
 * older respgate's, which no start takes now). Each install path keeps one file of ~440 KB, and nothing
 * else would ever remove them. Runs only when a cache is written, a start's first. Other files stay.
 */
function removeStaleCaches(dir: string, prefix: string, keep: string): void {
  for (const name of fs.readdirSync(dir)) {
    if (name === keep || !CACHE_NAME.test(name)) continue;
    const file = path.join(dir, name);
    try {
      // An older build of this file goes as it is; another file's cache goes when it has no header or its file is gone.
      const madeFor = name.startsWith(prefix) ? null : cachedPath(file);
      if (madeFor === null || !fs.existsSync(madeFor)) fs.rmSync(file, { force: true });
    } catch {
      // removed meanwhile by another start
    }
  }
}

/** The path a cache file was made for (its first line after the magic), or null when it has no header. */
function cachedPath(file: string): string | null {
  const start = Buffer.alloc(HEADER_MAGIC.length + 4096); // a path is at most 4 096 bytes (PATH_MAX)
  const fd = fs.openSync(file, 'r');
  let length: number;
  try {
    length = fs.readSync(fd, start, 0, start.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  const head = start.subarray(0, length);
  const magic = Buffer.from(HEADER_MAGIC);
  const end = head.indexOf(10, magic.length);
  return head.subarray(0, magic.length).equals(magic) && end > 0 ? head.toString('utf8', magic.length, end) : null;
}

/** FNV-1a of a path: a short, stable name part (node:crypto would cost a start ~7 ms). */
function pathHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}
