// Area placeholder: replaced by the real account area.
import type { AreaContext, AreaServer } from '../area.js';

export async function startAccountArea(_ctx: AreaContext): Promise<AreaServer> {
  return {
    async handle(_req, res) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'ERR account area is not available in this version of respgate' }));
    },
    async stop() {},
  };
}
