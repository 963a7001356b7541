// Area D, the message queue (at /queue on the platform's HTTP port, so the official SDK calls
// /queue/v2/...). Wires the records, the BullMQ engine, publishing, schedules and the HTTP routes.
import { Redis } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';
import { generateSigningKey } from '../../config.js';
import type { AreaContext, AreaServer } from '../area.js';
import { Billing } from '../account/billing.js';
import { Deliverer } from './delivery.js';
import { Engine } from './engine.js';
import { FlowControl } from './flow-control.js';
import { Publisher } from './publisher.js';
import { QueueRecords } from './records.js';
import { QueueRoutes } from './routes.js';
import { Schedules } from './schedules.js';
import { Signer } from './signer.js';
import { invokeResult } from './workflow-invoke.js';
import { WorkflowRuns } from './workflow-runs.js';

/** The queue area, with what the web console reads of it (src/platform/console/queue-inspect.ts). */
export interface QueueArea extends AreaServer {
  console: { engine: Engine; records: QueueRecords };
}

export async function startQueueArea(ctx: AreaContext): Promise<QueueArea> {
  const { config, log, internalEndpoint: ep } = ctx;
  const connection: ConnectionOptions = {
    host: ep.host,
    port: ep.port,
    username: ep.username,
    password: ep.password,
    db: ep.db ?? 0,
    maxRetriesPerRequest: null,
    // Commands issued in the same tick share one write: fewer syscalls per delivery under load.
    enableAutoPipelining: true,
  };
  const redis = new Redis({ ...connection, enableAutoPipelining: true, lazyConnect: false });
  redis.on('error', (err) => log.warn({ err: String(err) }, 'queue area: internal redis error'));
  const records = new QueueRecords(redis);
  let keys = await records.signingKeys({ current: config.signingKey, next: config.nextSigningKey }, generateSigningKey);
  const signer = new Signer(keys.current);
  const billing = new Billing(redis, config.queueMessagePrice);
  const deliverer = new Deliverer(config.maxRequestSize);
  const flow = new FlowControl(redis);
  const concurrency = config.queueConcurrency ?? 200;
  const workflows = new WorkflowRuns(redis);
  const engine = new Engine({
    connection,
    records,
    signer,
    deliverer,
    billing,
    flow,
    log,
    backoffScale: config.queueBackoffScale ?? 1,
    concurrency,
    workflows,
  });
  await engine.start(await records.listQueues());
  const publisher = new Publisher(records, engine, billing, workflows);
  // A run started by context.invoke resumes its invoker when it ends.
  workflows.onEnd = async (run) => {
    if (!run.invoker) return;
    await publisher.publish(invokeResult(run.invoker, run, run.callerIp ?? '127.0.0.1')).catch((err: unknown) => {
      log.warn(
        { err: String(err), run: run.workflowRunId, invoker: run.invoker?.workflowRunId },
        'queue area: the invoking run could not be resumed',
      );
    });
  };
  const schedules = new Schedules(connection, records, publisher, log);
  const routes = new QueueRoutes({
    token: () => config.queueToken || config.token,
    readonlyToken: () => config.readonlyToken,
    records,
    engine,
    publisher,
    schedules,
    billing,
    maxBodySize: config.maxRequestSize,
    keys: () => keys,
    flowControl: { flow, engine, globalParallelism: concurrency },
    rotateKeys: async () => {
      keys = await records.rotateKeys(keys.next, generateSigningKey);
      signer.setKey(keys.current);
      return keys;
    },
    workflows,
  });

  return {
    console: { engine, records },
    handle: (req, res, path, query) => routes.handle(req, res, path, query),
    banner: () => [
      `  Message queue                 ${ctx.baseUrl()}/queue`,
      '  Paste into your shell (@upstash/qstash reads them: new Client(), new Receiver()):',
      `    export QSTASH_URL=${ctx.baseUrl()}/queue`,
      `    export QSTASH_TOKEN=${config.queueToken || config.token}`,
      `    # read-only token (GET only): ${config.readonlyToken}`,
      `    export QSTASH_CURRENT_SIGNING_KEY=${keys.current}`,
      `    export QSTASH_NEXT_SIGNING_KEY=${keys.next}`,
      '',
    ],
    async stop() {
      await schedules.stop();
      await engine.stop();
      await records.flushEvents();
      redis.disconnect();
    },
  };
}
