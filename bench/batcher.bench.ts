// Micro-benchmark of the batcher (src/proxy/batcher.ts) alone: forwarded commands per second from
// many connections through enqueue → one call per turn → deliver, with an upstream client that
// answers at once (the HTTP path is measured in upstream-pipeline.bench.ts and proxy-throughput.ts).
// Run: npx tsx bench/batcher.bench.ts
import { Batcher, type BatchSource, type PipelineUpstream } from '../src/proxy/batcher.js';
import { ClientCost, requestBytes } from '../src/proxy/client-cost.js';
import type { CommandItem, ForwardItem } from '../src/proxy/forward-item.js';
import { measureAsync } from './measure.js';

const OK = Buffer.from('+OK\r\n');
/** Answers every command +OK on the next microtask: what is left is the batcher's own work. */
const instant: PipelineUpstream = {
  pipeline: (commands) => Promise.resolve(commands.map(() => OK)),
  transaction: () => Promise.resolve({ kind: 'aborted' }),
};

class Connection implements BatchSource {
  readonly pending: ForwardItem[] = [];
  inFlight = false;
  queued = false;
  answered = 0;
  private slot = 0;
  /** As dispatch measures it when it makes the item (CommandItem.bytes). */
  private readonly bytes: number;
  constructor(private readonly args: Buffer[]) {
    this.bytes = requestBytes(args);
  }
  send(n: number): void {
    for (let i = 0; i < n; i++)
      this.pending.push({
        kind: 'command',
        args: this.args,
        slot: this.slot++,
        shape: undefined,
        transform: undefined,
        name: 'get',
        bytes: this.bytes,
      });
  }
  deliver(_item: CommandItem, _reply: Buffer): void {
    this.answered++;
  }
  deliverTransaction(): void {}
  afterBatch(): void {}
  runBlocking(): void {}
}

async function round(connections: number, perTurn: number, turns: number, cost?: ClientCost): Promise<number> {
  const batcher = new Batcher(instant, { maxBatch: 1000, maxInFlight: 16, cost });
  const args = [Buffer.from('GET'), Buffer.from('key:1')];
  const conns = Array.from({ length: connections }, () => new Connection(args));
  const total = connections * perTurn * turns;
  for (let t = 0; t < turns; t++) {
    for (const c of conns) {
      c.send(perTurn);
      batcher.enqueue(c);
    }
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
  }
  while (conns.reduce((n, c) => n + c.answered, 0) < total) await new Promise((r) => setImmediate(r));
  return total;
}

console.log(`node ${process.version}`);
await measureAsync('50 connections × 1 command per turn', 'commands', () => round(50, 1, 400));
await measureAsync('50 connections × 16 commands per turn', 'commands', () => round(50, 16, 100));
await measureAsync('1 connection × 100 commands per turn', 'commands', () => round(1, 100, 400));
// With per-client cost accounting, as the proxy runs it (client-cost.ts).
await measureAsync('50 × 16 per turn, client cost on', 'commands', () => round(50, 16, 100, new ClientCost()));
await measureAsync('50 × 1 per turn, client cost on', 'commands', () => round(50, 1, 400, new ClientCost()));
