/** The local Redis Cluster is shared with `npm run test:redis-cluster`, so it lives in ops/lib. */
export * from '../../ops/lib/redis-cluster.js';
