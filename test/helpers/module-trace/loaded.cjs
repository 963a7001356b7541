// node --require <this file>: keeps in the file named by RESPGATE_LOADED_TRACE what the process has loaded
// so far, Node's own modules (process.moduleLoadList) and CommonJS files (require's cache), one a line,
// written again every 50 ms (test/startup.test.ts). CommonJS, so that it sets up no ES-module loader of
// its own: a proxy started by bin/respgate needs none, and the test checks that.
const { writeFileSync } = require('node:fs');

const file = process.env.RESPGATE_LOADED_TRACE;
const write = () => writeFileSync(file, [...process.moduleLoadList, ...Object.keys(require.cache)].join('\n'));
setInterval(write, 50).unref();
