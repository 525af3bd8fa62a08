/**
 * `npm run test:redis-cluster [-- vitest args]`: starts a local three-master Redis Cluster (ops/lib/
 * redis-cluster.ts) and runs the store tests with every test server on it (TEST_REDIS_CLUSTER_NODES →
 * REDIS_CLUSTER_NODES), then stops the cluster. Without arguments: test/integration/store and the
 * call admission suite.
 */
import { spawn } from 'node:child_process';
import { startRedisCluster } from './lib/redis-cluster.js';

const DEFAULT_TESTS = ['test/integration/store', 'test/integration/call/admission.test.ts'];

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const cluster = await startRedisCluster();
  try {
    process.stdout.write(`Redis Cluster on ${cluster.nodes.join(', ')}\n`);
    const child = spawn('npx', ['vitest', 'run', ...(args.length ? args : DEFAULT_TESTS)], {
      stdio: 'inherit',
      env: { ...process.env, TEST_REDIS_CLUSTER_NODES: cluster.nodes.join(',') },
    });
    return await new Promise<number>((resolve) => {
      child.on('error', (e) => {
        process.stderr.write(`cannot run vitest: ${e.message}\n`);
        resolve(1);
      });
      child.on('exit', (code) => resolve(code ?? 1));
    });
  } finally {
    await cluster.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
