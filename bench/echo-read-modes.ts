// CPU per request of a bare RESP server in Node, by how it reads and writes its sockets, next to a
// redis-server, with redis-benchmark PING_MBULK (-c 50 -P 1): the floor a Node proxy has per
// request before doing any work of its own (issue 14, bench/README.md "CPU per command").
//   data    socket 'data' event + socket.write (the stream API)
//   onread  net.Socket's onread mode into one shared buffer (src/server/socket-input.ts) + socket.write
//   handle  onread + a write on the socket handle below the Writable stream, a new WriteWrap per write
//   output  onread + src/server/socket-output.ts (the handle's write, its request object used again)
//
//   npx tsx bench/echo-read-modes.ts [--rounds 3] [--requests 200000] [--modes data,onread,handle,output]
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createReadBuffer, readSocket } from '../src/server/socket-input.js';
import { SocketOutput } from '../src/server/socket-output.js';

const run = promisify(execFile);
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const REPLY = Buffer.from('*0\r\n'); // any reply will do: redis-benchmark counts them

function serve(mode: string): void {
  const { WriteWrap } = (process as unknown as { binding(name: string): { WriteWrap: new () => Record<string, unknown> } }).binding(
    'stream_wrap',
  );
  const readBuffer = createReadBuffer();
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    socket.setNoDelay(true);
    const handle = (socket as unknown as { _handle: { writeBuffer(req: unknown, b: Buffer): number } })._handle;
    const output = new SocketOutput(socket, { outputDrained: () => undefined });
    const answer = (chunk: Buffer): void => {
      let n = 0;
      for (let i = chunk.indexOf(42); i >= 0; i = chunk.indexOf(42, i + 1)) n++; // one '*' per command
      const out = n === 1 ? REPLY : Buffer.concat(Array<Buffer>(n).fill(REPLY));
      if (mode === 'handle' && socket.writableLength === 0) {
        const req = new WriteWrap();
        req.handle = handle;
        req.oncomplete = () => undefined;
        if (handle.writeBuffer(req, out) !== 0) socket.destroy();
      } else if (mode === 'output') output.write(out);
      else socket.write(out);
    };
    if (mode === 'data') socket.on('data', answer);
    else readSocket(socket, readBuffer, answer);
    socket.on('end', () => socket.end());
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as net.AddressInfo).port}\n`));
}

/** [user, user + system] clock ticks of a process. */
function cpuTicks(pid: number): [number, number] {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return [Number(f[11]), Number(f[11]) + Number(f[12])];
}

async function start(cmd: string, args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d) => resolve(Number(String(d).trim()))));
  return { child, port };
}

async function main(): Promise<void> {
  const rounds = arg('--rounds', 3);
  const requests = arg('--requests', 200_000);
  const self = fileURLToPath(import.meta.url);
  const targets: Record<string, { child: ChildProcess; port: number }> = {};
  const modes = (process.argv.includes('--modes') ? process.argv[process.argv.indexOf('--modes') + 1] : 'data,onread,handle,output').split(
    ',',
  );
  for (const mode of modes) targets[mode] = await start(process.execPath, [...process.execArgv, self, '--serve', mode]);
  const redisPort = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, 500));
  targets.redis = { child: redis, port: redisPort };
  const samples: Record<string, number[]> = {};
  const users: Record<string, number[]> = {};
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [name, t] of Object.entries(targets)) {
        const before = cpuTicks(t.child.pid!);
        await run('redis-benchmark', ['-p', String(t.port), '-c', '50', '-n', String(requests), '-t', 'ping_mbulk', '--csv']);
        const after = cpuTicks(t.child.pid!);
        (samples[name] ??= []).push(((after[1] - before[1]) * 10_000) / requests); // 100 Hz ticks → µs
        (users[name] ??= []).push(((after[0] - before[0]) * 10_000) / requests);
      }
    }
  } finally {
    for (const t of Object.values(targets)) t.child.kill();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`CPU µs per request, median of ${rounds} (redis-benchmark -c 50 -n ${requests} -t ping_mbulk -P 1):`);
  for (const [name, xs] of Object.entries(samples))
    console.log(
      `  ${name.padEnd(7)} ${median(xs).toFixed(2)} µs, user ${median(users[name]).toFixed(2)}  (${xs.map((x) => x.toFixed(2)).join(', ')})`,
    );
}

if (process.argv[2] === '--serve') serve(process.argv[3]);
else await main();
