// The side ports' command schema is the one every table port uses (server/command-table.ts); the
// handler modules import it under this name.
export type { ArgSpec, Call, CommandSpec, Handler, Reply } from '../server/command-table.js';
