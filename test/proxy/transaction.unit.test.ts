// MULTI … EXEC of one connection (src/proxy/transaction.ts) in-process: what is queued, what is refused,
// the /multi-exec call EXEC builds, and the EXEC array made from a fake upstream's outcome.
// test/proxy/transactions.test.ts runs the same through the proxy against a real redis-server.
import { describe, expect, it } from 'vitest';
import { resolveCommand } from '../../src/commands/table.js';
import { Transaction, transactionReply, type ExecCall } from '../../src/proxy/transaction.js';
import { EMPTY_EXEC, EXECABORT } from '../../src/server/replies.js';

const words = (...w: string[]) => w.map((x) => Buffer.from(x));
const spec = (...w: string[]) => resolveCommand(w)!;
const str = (b: Buffer | ExecCall) => (Buffer.isBuffer(b) ? b.toString() : b);

/** Sends one command to the transaction as dispatch does: outside() before MULTI, inside() after. */
function send(t: Transaction, ...w: string[]): string {
  if (!t.open) return t.outside(spec(...w)).toString();
  const r = t.inside(spec(...w), words(...w));
  return r.kind === 'reply' || r.kind === 'reject' ? r.reply.toString() : r.kind;
}

const pong = () => Buffer.from('+PONG\r\n');

describe('Transaction', () => {
  it('queues forwarded and local commands, and EXEC makes one upstream call for the forwarded ones', () => {
    const t = new Transaction();
    expect(send(t, 'MULTI')).toBe('+OK\r\n');
    expect(send(t, 'SET', 'a', '1')).toBe('+QUEUED\r\n');
    expect(send(t, 'PING')).toBe('+QUEUED\r\n');
    expect(send(t, 'INCR', 'a')).toBe('+QUEUED\r\n');
    expect(t.queuedCount).toBe(3);
    expect(send(t, 'EXEC')).toBe('exec');
    const call = t.exec(pong, () => 2) as ExecCall;
    expect(call.commands.map((c) => c.map(String))).toEqual([
      ['SET', 'a', '1'],
      ['INCR', 'a'],
    ]);
    expect(t.open).toBe(false);
    // The fake upstream ran both: the EXEC array keeps queue order, with PING's local reply in place.
    const reply = transactionReply(call.parts, { kind: 'executed-script', replies: [Buffer.from('+OK\r\n'), Buffer.from(':2\r\n')] }, 2);
    expect(reply.toString()).toBe('*3\r\n+OK\r\n+PONG\r\n:2\r\n');
  });

  it('answers Redis errors for EXEC/DISCARD without MULTI, nested MULTI and WATCH inside MULTI', () => {
    const t = new Transaction();
    expect(send(t, 'EXEC')).toBe('-ERR EXEC without MULTI\r\n');
    expect(send(t, 'DISCARD')).toBe('-ERR DISCARD without MULTI\r\n');
    send(t, 'MULTI');
    expect(send(t, 'MULTI')).toBe('-ERR MULTI calls can not be nested\r\n');
    expect(send(t, 'WATCH', 'k')).toBe('-ERR WATCH inside MULTI is not allowed\r\n');
    expect(send(t, 'DISCARD')).toBe('+OK\r\n');
    expect(t.open).toBe(false);
  });

  it('a command that failed its check flags the transaction: EXEC answers EXECABORT and closes it', () => {
    const t = new Transaction();
    send(t, 'MULTI');
    send(t, 'SET', 'a', '1');
    t.checkFailed("ERR unknown command 'nope'");
    expect(str(t.exec(pong, () => 2))).toBe(EXECABORT.toString());
    expect(t.open).toBe(false);
  });

  it('an empty MULTI … EXEC answers the empty array without an upstream call', () => {
    const t = new Transaction();
    send(t, 'MULTI');
    expect(str(t.exec(pong, () => 2))).toBe(EMPTY_EXEC.toString());
  });

  it('only local commands: EXEC answers their array at once', () => {
    const t = new Transaction();
    send(t, 'MULTI');
    send(t, 'PING');
    send(t, 'PING');
    expect(str(t.exec(pong, () => 2))).toBe('*2\r\n+PONG\r\n+PONG\r\n');
  });

  it('a blocking command inside MULTI is sent in its non-blocking form, as Redis never blocks there', () => {
    const t = new Transaction();
    send(t, 'MULTI');
    expect(send(t, 'BLPOP', 'list', '0')).toBe('+QUEUED\r\n');
    const call = t.exec(pong, () => 2) as ExecCall;
    expect(call.commands).toHaveLength(1);
    expect(call.commands[0].map(String)).not.toContain('BLPOP');
  });

  it('turns the upstream outcomes into the EXEC reply: a changed watched key is a null EXEC, a discard is EXECABORT', () => {
    expect(transactionReply([], { kind: 'aborted' }, 2).toString()).toBe('*-1\r\n');
    expect(transactionReply([], { kind: 'aborted' }, 3).toString()).toBe('_\r\n');
    expect(transactionReply([], { kind: 'discarded', error: 'ERR bad' }, 2).toString()).toBe(
      '-EXECABORT Transaction discarded because of: ERR bad\r\n',
    );
    expect(transactionReply([], { kind: 'failed', error: 'ERR upstream down' }, 2).toString()).toBe('-ERR upstream down\r\n');
  });
});
