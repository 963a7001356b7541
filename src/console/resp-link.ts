// The console's own small RESP client of the proxy: one connection, commands pipelined, replies
// decoded into plain values (RESP2, which a new connection speaks). Built on src/resp/ alone, so the
// proxy role can use it without the platform's Redis connection (test/startup.test.ts).
import net from 'node:net';
import { encodeCommands } from '../resp/request-writer.js';
import { parseLength, scanReply } from '../resp/reply-scanner.js';

export interface RespEndpoint {
  host: string;
  port: number;
  password?: string;
  /** An ACL user (AUTH <user> <password>); without it, AUTH <password>. */
  user?: string;
}

/** A reply: string (bulk or status), number, null, an array of replies, or a ReplyError. */
export type Reply = string | number | null | ReplyError | Reply[];

/** An error reply (`-ERR …`, `-WRONGPASS …`): its text is the message. */
export class ReplyError extends Error {}

export class RespLink {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly waiting: { resolve: (r: Reply) => void; reject: (e: Error) => void }[] = [];
  private failure: Error | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('the connection to the proxy closed')));
  }

  /** Connects and, with a password, authenticates (rejects with the proxy's error text). */
  static async open(endpoint: RespEndpoint, timeoutMs = 5000): Promise<RespLink> {
    const socket = net.connect({ host: endpoint.host, port: endpoint.port });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`the proxy at ${endpoint.host}:${endpoint.port} did not accept a connection within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once('connect', () => (clearTimeout(timer), resolve()));
      socket.once('error', (err) => (clearTimeout(timer), reject(new Error(`cannot connect to the proxy: ${err.message}`))));
    });
    const link = new RespLink(socket);
    if (endpoint.password !== undefined) {
      const auth = endpoint.user !== undefined ? ['AUTH', endpoint.user, endpoint.password] : ['AUTH', endpoint.password];
      const [reply] = await link.send([auth]);
      if (reply instanceof ReplyError) {
        link.close();
        throw reply;
      }
    }
    return link;
  }

  get closed(): boolean {
    return this.failure !== undefined;
  }

  send(commands: string[][]): Promise<Reply[]> {
    if (this.failure) return Promise.reject(this.failure);
    const replies = commands.map(() => new Promise<Reply>((resolve, reject) => this.waiting.push({ resolve, reject })));
    this.socket.write(encodeCommands(commands));
    return Promise.all(replies);
  }

  close(): void {
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    let start = 0;
    for (;;) {
      const end = start < this.buffer.length ? scanReply(this.buffer, start) : -1;
      if (end < 0) break;
      const [reply] = decode(this.buffer, start);
      this.waiting.shift()?.resolve(reply);
      start = end;
    }
    this.buffer = this.buffer.subarray(start);
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    for (const w of this.waiting.splice(0)) w.reject(err);
  }
}

/** One complete RESP2 reply at `pos`: its value and where the next begins. */
export function decode(buf: Buffer, pos: number): [Reply, number] {
  const lineEnd = buf.indexOf(13, pos + 1);
  const next = lineEnd + 2;
  const line = () => buf.toString('utf8', pos + 1, lineEnd);
  switch (buf[pos]) {
    case 0x2b /* + */:
      return [line(), next];
    case 0x2d /* - */:
      return [new ReplyError(line()), next];
    case 0x3a /* : */:
      return [Number(line()), next];
    case 0x24 /* $ */: {
      const len = parseLength(buf, pos + 1, lineEnd);
      return len < 0 ? [null, next] : [buf.toString('utf8', next, next + len), next + len + 2];
    }
    case 0x2a /* * */: {
      const n = parseLength(buf, pos + 1, lineEnd);
      if (n < 0) return [null, next];
      const out: Reply[] = [];
      let p = next;
      for (let i = 0; i < n; i++) {
        const [value, after] = decode(buf, p);
        out.push(value);
        p = after;
      }
      return [out, p];
    }
    default:
      throw new Error(`unexpected RESP2 reply type byte 0x${buf[pos].toString(16)} from the proxy`);
  }
}
