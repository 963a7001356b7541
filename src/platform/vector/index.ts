// Area placeholder: replaced by the real vector area.
import type { AreaContext, AreaServer } from '../area.js';

export async function startVectorArea(_ctx: AreaContext): Promise<AreaServer> {
  return {
    async handle(_req, res) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'ERR vector area is not available in this version of respgate' }));
    },
    async stop() {},
  };
}
