// node --import <this file>: records the URL of every module the process resolves, one a line, in
// the file named by RESPGATE_MODULE_TRACE (test/startup.test.ts).
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url, { data: { file: process.env.RESPGATE_MODULE_TRACE } });
