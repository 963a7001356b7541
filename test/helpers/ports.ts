// Ports for tests that stop a server and start it again on the same port (the client under test
// keeps the address). A port from port 0 would be unsafe: between stop and start another test
// worker's port-0 bind may be handed that very port. Ports below the kernel's ephemeral range are
// never handed out for port 0, so only another test choosing the same random port could take it.
import { readFileSync } from 'node:fs';
import net from 'node:net';

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low > 0 && high >= low) return [low, high];
  } catch {
    // not Linux: the IANA range
  }
  return [49152, 65535];
}

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A free loopback port outside the ephemeral range: for a server restarted on it, or a port that must stay closed. */
export async function restartablePort(): Promise<number> {
  const [low] = ephemeralRange();
  const from = 10_000;
  const to = Math.max(from + 1000, low - 1);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from));
    if (port < low && (await free(port))) return port;
  }
  throw new Error(`no free port between ${from} and ${low}`);
}
