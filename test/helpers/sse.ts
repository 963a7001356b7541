// A minimal event-stream reader for tests: collects `data:` lines of one SSE response.
import { request } from 'undici';

export interface EventStream {
  status: number;
  events: string[];
  /** Resolves when at least `n` events have arrived (or rejects after `ms`). */
  waitFor(n: number, ms?: number): Promise<string[]>;
  close(): void;
  body: string;
}

export async function openEventStream(url: string, token: string): Promise<EventStream> {
  const controller = new AbortController();
  const res = await request(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
    signal: controller.signal,
  });
  const stream: EventStream = {
    status: res.statusCode,
    events: [],
    body: '',
    waitFor: (n, ms = 5000) =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const check = () => {
          if (stream.events.length >= n) return resolve(stream.events.slice());
          if (Date.now() - started > ms)
            return reject(new Error(`only ${stream.events.length} of ${n} events: ${JSON.stringify(stream.events)}`));
          setTimeout(check, 10);
        };
        check();
      }),
    close: () => controller.abort(),
  };
  let pending = '';
  res.body.on('data', (chunk: Buffer) => {
    stream.body += chunk.toString();
    pending += chunk.toString();
    let idx: number;
    while ((idx = pending.indexOf('\n\n')) >= 0) {
      const block = pending.slice(0, idx);
      pending = pending.slice(idx + 2);
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6));
      if (data.length > 0) stream.events.push(data.join('\n'));
    }
  });
  res.body.on('error', () => undefined);
  return stream;
}
