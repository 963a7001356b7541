// Micro-benchmark of the reply queue (src/server/reply-queue.ts), the writer step of every reply:
// take a position, fill it out of order, write what is ready, against a socket that discards.
// Run: npx tsx bench/reply-queue.bench.ts
import type net from 'node:net';
import { ReplyQueue } from '../src/server/reply-queue.js';
import { measure } from './measure.js';

let written = 0;
const sink = { write: (b: Buffer) => ((written += b.length), true), end: () => undefined } as unknown as net.Socket;
const reply = Buffer.from('$5\r\nhello\r\n');

function round(batch: number, batches: number): number {
  const q = new ReplyQueue(sink, 5000);
  for (let b = 0; b < batches; b++) {
    const slots: number[] = [];
    for (let i = 0; i < batch; i++) slots.push(q.take());
    // Replies of one upstream call arrive together, then the ready ones are written.
    for (const s of slots) q.fill(s, reply);
    q.write();
  }
  return batch * batches;
}

console.log(`node ${process.version}`);
measure('1 reply per write', 'replies', () => round(1, 200_000));
measure('16 replies per write (pipeline -P 16)', 'replies', () => round(16, 20_000));
measure('1000 replies per write', 'replies', () => round(1000, 300));
if (written === 0) throw new Error('nothing written');
