// The side ports describe their commands in the schema every table port uses (server/command-table.ts,
// the shape of src/commands/); the handler modules import it from here.
export type { PortArg, Call, PortCommand, Handler, Reply } from '../server/command-table.js';
