// node --require <this file>: keeps in the file named by RESPGATE_LOADED_TRACE what the process has loaded
// so far, Node's own modules (process.moduleLoadList) and CommonJS files (require.cache), one a line,
// written again every 50 ms (test/startup.test.ts).
const fs = require('node:fs');

const file = process.env.RESPGATE_LOADED_TRACE;
const write = () => fs.writeFileSync(file, [...process.moduleLoadList, ...Object.keys(require.cache)].join('\n'));
setInterval(write, 50).unref();
