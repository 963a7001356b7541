// node --require <this file>: keeps in the file named by RESPGATE_LOADED_TRACE what the process has loaded
// so far, Node's own modules (process.moduleLoadList) and CommonJS files (require's cache), one a line,
// written again every 50 ms (test/startup.test.ts). CommonJS, so that it sets up no ES-module loader of
// its own: a proxy started by bin/respgate needs none, and the test checks that.
const { renameSync, writeFileSync } = require('node:fs');
const { isMainThread } = require('node:worker_threads');

// A worker thread runs --require preloads too (the loader hooks' thread of register.mjs): only the main
// thread's modules are the process's answer, and one writer only.
if (isMainThread) {
  const file = process.env.RESPGATE_LOADED_TRACE;
  // Written aside and renamed: a test reading the file while it is written again must not see it cut short.
  const write = () => {
    writeFileSync(`${file}.new`, [...process.moduleLoadList, ...Object.keys(require.cache)].join('\n'));
    renameSync(`${file}.new`, file);
  };
  setInterval(write, 50).unref();
}
