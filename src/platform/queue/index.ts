// Area placeholder: replaced by the real queue area.
import type { AreaContext, AreaServer } from '../area.js';

export async function startQueueArea(_ctx: AreaContext): Promise<AreaServer> {
  return {
    async handle(_req, res) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'ERR queue area is not available in this version of respgate' }));
    },
    async stop() {},
  };
}
