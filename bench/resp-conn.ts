// A small RESP client for the benchmarks that time whole round trips (blocking, WATCH): one command
// at a time or several in flight, each reply returned as latin1 text. Replies are split by the
// proxy's own reply scanner.
import net from 'node:net';
import { scanReply } from '../src/resp/reply-scanner.js';

export class Conn {
  private buf = Buffer.alloc(0);
  private readonly waiting: ((reply: string) => void)[] = [];
  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      for (;;) {
        const end = this.buf.length > 0 ? scanReply(this.buf, 0) : -1;
        if (end < 0) break;
        const reply = this.buf.subarray(0, end).toString('latin1');
        this.buf = this.buf.subarray(end);
        this.waiting.shift()?.(reply);
      }
    });
  }
  static connect(port: number): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(new Conn(s)));
      s.setNoDelay(true);
      s.once('error', reject);
    });
  }
  call(...args: string[]): Promise<string> {
    this.socket.write(`*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join(''));
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  close(): void {
    this.socket.destroy();
  }
}
