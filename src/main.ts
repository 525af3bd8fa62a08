/**
 * Composition root of the process: reads the environment, starts the service, handles signals.
 * On a configuration or connection problem it prints one clear line and exits non-zero.
 */
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startServer } from './server.js';
import { DatabaseUnavailableError } from './store/postgres/db.js';
import { RedisUnavailableError } from './store/redis/client.js';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`switchboard: configuration error: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  const logger = createLogger(config.logLevel);
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config, { logger });
  } catch (e) {
    if (e instanceof DatabaseUnavailableError || e instanceof RedisUnavailableError) {
      process.stderr.write(`switchboard: ${e.message}\n`);
      process.exit(1);
    }
    logger.fatal({ err: e }, 'start-up failed');
    // One line whatever the log level (a port already taken, a migration failing): the reason a
    // supervisor or a test sees without turning logging on.
    process.stderr.write(`switchboard: start-up failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
  let stopping = false;
  // SIGTERM drains (a front fails over while live calls finish); SIGINT, a developer's Ctrl-C, does not.
  const stop = async (signal: string, drainMs: number) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, drainMs }, 'shutting down');
    const force = setTimeout(() => process.exit(1), drainMs + 15_000);
    force.unref();
    await server.drain(drainMs);
    await server.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM', config.drainTimeoutMs));
  process.on('SIGINT', () => void stop('SIGINT', 0));
}

void main();
