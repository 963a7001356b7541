// node --require <this file>: keeps in the file named by RESPGATE_LOADED_TRACE what the process has loaded
// so far, Node's own modules (process.moduleLoadList) and CommonJS files (require's cache), one a line, and
// `main <file>` when the entry is a CommonJS module; written again every 50 ms (test/startup.test.ts).
// CommonJS, so that it sets up no ES-module loader of its own before the entry.
const { renameSync, writeFileSync } = require('node:fs');
const { isMainThread } = require('node:worker_threads');

// A worker thread runs --require preloads too (the loader hooks' thread of register.mjs): only the main
// thread's modules are the process's answer, and one writer only.
if (isMainThread) {
  const file = process.env.RESPGATE_LOADED_TRACE;
  // Written aside and renamed: a test reading the file while it is written again must not see it cut short.
  const write = () => {
    // The entry, when it is a CommonJS module (an ES module entry is none).
    const main = process.mainModule ? [`main ${process.mainModule.filename}`] : [];
    writeFileSync(`${file}.new`, [...process.moduleLoadList, ...Object.keys(require.cache), ...main].join('\n'));
    renameSync(`${file}.new`, file);
  };
  setInterval(write, 50).unref();
}
