// docs/compatibility.md is generated from the route table (src/commands/routes.ts); this checks the
// table against what the handlers do, so the doc cannot promise a local answer the proxy refuses:
// every command routed `local` is answered by a handler, never with "not supported by respgate".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allCommandsAndSubcommands, routeOf } from '../../src/commands/table.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

/** Commands whose placeholder call would be a wrong input: a call the handler serves instead. */
const SERVED_CALLS: Record<string, string[]> = {
  // CONFIG SET answers the encoding parameters itself and refuses the service-managed ones.
  'config|set': ['CONFIG', 'SET', 'hash-max-listpack-entries', '128'],
};

/** The command with placeholder arguments up to its arity (`CLIENT KILL x`). */
function minimalCall(name: string, arity: number): string[] {
  if (SERVED_CALLS[name]) return SERVED_CALLS[name];
  const words = name.split('|').map((w) => w.toUpperCase());
  while (words.length < Math.abs(arity)) words.push('x');
  return words;
}

describe('local routes', () => {
  const local = allCommandsAndSubcommands().filter(
    (s) =>
      routeOf(
        s,
        minimalCall(s.name, s.arity).map((w) => Buffer.from(w)),
      ) === 'local',
  );

  it('are answered by a handler, never refused', async () => {
    expect(local.length).toBeGreaterThan(20);
    // QUIT and RESET change the connection: each command gets a connection of its own.
    for (const spec of local) {
      const client = await RawClient.connect(stack.proxy.port);
      try {
        const [reply] = await client.call(minimalCall(spec.name, spec.arity));
        expect(reply.toString('latin1'), spec.name).not.toMatch(/not supported by respgate/);
      } finally {
        client.close();
      }
    }
  });
});
