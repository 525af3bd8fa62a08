/**
 * `npm run cluster`: Kamailio as the SIP front (ops/kamailio/switchboard.cfg) and N Switchboard nodes
 * on this box, one Postgres and one Redis. Each node gets its own HTTP port (8081…), SIP port
 * (5081…) and RTP range; media goes straight to each node's engine. Ctrl-C stops the nodes (drained
 * with SIGTERM) and the front.
 *
 * Env: CLUSTER_NODES (default: one per core), CLUSTER_SIP_HOST/CLUSTER_SIP_PORT (the front, default
 * 127.0.0.5:5060), ADMIN_EMAIL/ADMIN_PASSWORD, DATABASE_URL, REDIS_URL, REDIS_PREFIX, and any
 * server variable, passed to every node.
 */
import { availableParallelism } from 'node:os';
import { startKamailio } from './lib/kamailio.js';
import { type ServerProcess, startServerProcess } from './lib/server-process.js';

const count = Number(process.env.CLUSTER_NODES ?? availableParallelism());
const frontHost = process.env.CLUSTER_SIP_HOST ?? '127.0.0.5';
const frontPort = Number(process.env.CLUSTER_SIP_PORT ?? 5060);
const admin = {
  email: process.env.ADMIN_EMAIL ?? 'admin@switchboard.local',
  password: process.env.ADMIN_PASSWORD ?? 'switchboard-admin',
};
const store = {
  databaseUrl: process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/switchboard',
  redisPrefix: process.env.REDIS_PREFIX ?? 'sb',
};

async function main(): Promise<void> {
  const nodes: ServerProcess[] = [];
  for (let i = 1; i <= count; i++) {
    // One node first: it creates and migrates the database before the others start.
    const node = await startServerProcess(store, {
      entry: 'src',
      admin,
      host: '127.0.0.1',
      sipPort: 5080 + i,
      env: {
        INSTANCE_ID: `node-${i}`,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
        RTP_PORT_MIN: String(20000 + (i - 1) * 2000),
        RTP_PORT_MAX: String(20000 + i * 2000 - 1),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    nodes.push(node);
    process.stdout.write(`node-${i}: REST ${node.base}, SIP 127.0.0.1:${node.sipPort}\n`);
  }
  const front = await startKamailio({
    host: frontHost,
    port: frontPort,
    nodes: nodes.map((n) => `127.0.0.1:${n.sipPort}`),
    shmMb: 1024,
  });
  process.stdout.write(`kamailio: SIP udp:${front.host}:${front.port} → ${nodes.length} nodes\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await Promise.all(
      nodes.map(async (n) => {
        if (n.child.exitCode !== null) return;
        n.child.kill('SIGTERM');
        await new Promise((r) => n.child.once('exit', r));
      }),
    );
    await front.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((e: unknown) => {
  process.stderr.write(`cluster: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
