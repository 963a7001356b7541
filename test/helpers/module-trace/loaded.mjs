// node --import <this file>: keeps in the file named by RESPGATE_LOADED_TRACE what the process has loaded
// so far, Node's own modules (process.moduleLoadList) and CommonJS files (require's cache), one a line,
// written again every 50 ms (test/startup.test.ts). Node's modules by getBuiltinModule: an import of
// one would load more of them (its ES-module facade).
const { writeFileSync } = process.getBuiltinModule('node:fs');
const requireCache = process.getBuiltinModule('node:module').createRequire(import.meta.url).cache;

const file = process.env.RESPGATE_LOADED_TRACE;
const write = () => writeFileSync(file, [...process.moduleLoadList, ...Object.keys(requireCache)].join('\n'));
setInterval(write, 50).unref();
