/**
 * Composition of the stores: Postgres (created and migrated), Redis (commands and a subscriber), and
 * the repositories with the small services that sit directly on them (notifications, recordings,
 * profiles, the gateway change bus).
 */
import type { AccountService } from '../actors/account/account-service.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { StoreMeter } from '../metrics/port.js';
import { Notifier } from '../notifications/notifier.js';
import { ProfileResolver } from '../profiles/resolution.js';
import { RecordingService } from '../recordings/recording-service.js';
import { LocalRecordingStorage } from '../recordings/storage.js';
import { CachedClientStore } from '../store/cached-client-store.js';
import { CachedNumberStore } from '../store/cached-number-store.js';
import { CachedProfileStore } from '../store/cached-profile-store.js';
import type { ClientStore } from '../store/client-store.js';
import type { NumberStore } from '../store/number-store.js';
import { PgApplicationStore } from '../store/postgres/application-repository.js';
import { PgCallStore } from '../store/postgres/call-repository.js';
import { PgCallerIdStore } from '../store/postgres/caller-id-repository.js';
import { PgClientStore } from '../store/postgres/client-repository.js';
import { PgConferenceStore } from '../store/postgres/conference-repository.js';
import { type Db, ensureDatabase, migrate, openDb } from '../store/postgres/db.js';
import { PgGatewayStore } from '../store/postgres/gateway-repository.js';
import { PgNotificationStore } from '../store/postgres/notification-repository.js';
import { PgNumberStore } from '../store/postgres/number-repository.js';
import { PgProfileStore } from '../store/postgres/profile-repository.js';
import { PgRecordingStore } from '../store/postgres/recording-repository.js';
import type { ProfileStore } from '../store/profile-store.js';
import { RedisChangeBus } from '../store/redis/change-bus.js';
import { connectRedisStore, connectSubscriber, type Redis } from '../store/redis/client.js';
import { RedisGatewayBus } from '../store/redis/gateway-bus.js';
import { type RedisKeys, redisKeys } from '../store/redis/keys.js';
import { RedisSnapshotStore } from '../store/redis/snapshot-store.js';
import type { Lifecycle } from './lifecycle.js';

/** The open connections and what every aggregate shares over them. */
export interface Connections {
  readonly db: Db;
  readonly redis: Redis;
  /** The Redis connection in subscriber mode (account and gateway buses). */
  readonly sub: Redis;
  readonly keys: RedisKeys;
  readonly snapshots: RedisSnapshotStore;
}

/** Creates and migrates the database, then connects Redis. */
export async function connectStores(
  config: Config,
  logger: Logger,
  lifecycle: Lifecycle,
  meter?: StoreMeter,
): Promise<Connections> {
  await ensureDatabase(config.database.url);
  const db = openDb(config.database.url, undefined, meter);
  lifecycle.onClose(() => db.dispose());
  const applied = await migrate(db);
  if (applied.length) logger.info({ applied }, 'database migrations applied');

  const redis = await connectRedisStore(config.redis, meter);
  lifecycle.onClose(() => redis.quit());
  const sub = await connectSubscriber(redis);
  lifecycle.onClose(() => sub.quit());
  const keys = redisKeys(config.redis.prefix);
  const snapshots = new RedisSnapshotStore(redis, keys);
  return { db, redis, sub, keys, snapshots };
}

export interface Repositories {
  readonly calls: PgCallStore;
  readonly applications: PgApplicationStore;
  readonly clients: ClientStore;
  readonly numbers: NumberStore;
  readonly callerIds: PgCallerIdStore;
  readonly notifications: PgNotificationStore;
  readonly notifier: Notifier;
  readonly recordings: PgRecordingStore;
  readonly conferences: PgConferenceStore;
  readonly recordingStorage: LocalRecordingStorage;
  readonly recordingService: RecordingService;
  readonly gateways: PgGatewayStore;
  readonly profiles: ProfileStore;
  readonly profileResolver: ProfileResolver;
}

/**
 * The repositories, and the account hooks that keep them consistent with account closing and moves.
 * `publicUrl` is known only once the HTTP port is bound (Notification URIs carry it).
 */
export async function openRepositories(
  config: Config,
  logger: Logger,
  { db, redis, sub, keys }: Connections,
  accounts: AccountService,
  publicUrl: string,
): Promise<Repositories> {
  const calls = new PgCallStore(db);
  const applications = new PgApplicationStore(db);
  const clients = new CachedClientStore(
    new PgClientStore(db),
    new RedisChangeBus(redis, sub, keys.clientChannel),
    new RedisChangeBus(redis, sub, keys.accountChannel),
  );
  await clients.start();
  const numbers = new CachedNumberStore(
    new PgNumberStore(db),
    new RedisChangeBus(redis, sub, keys.numberChannel),
  );
  await numbers.start();
  const callerIds = new PgCallerIdStore(db);
  const notifications = new PgNotificationStore(db);
  const notifier = new Notifier(notifications, logger.child({ component: 'notifications' }), publicUrl);
  const recordings = new PgRecordingStore(db);
  const conferences = new PgConferenceStore(db);
  const recordingStorage = new LocalRecordingStorage(config.recordings.dir);
  const recordingService = new RecordingService(recordings, recordingStorage);
  const gatewayBus = new RedisGatewayBus(redis, sub, keys.gatewayChannel);
  await gatewayBus.start();
  const gateways = new PgGatewayStore(db, gatewayBus);
  // Every account representation names its effective profile: links are cached, changes announced.
  const profiles = new CachedProfileStore(
    new PgProfileStore(db),
    new RedisChangeBus(redis, sub, keys.profileLinkChannel),
  );
  await profiles.start();
  const profileResolver = new ProfileResolver(profiles, accounts);
  // Spec §Account Status: closing an account deletes most of its resources.
  accounts.onClosed(async (accountSid) => {
    await numbers.deleteAllOf(accountSid);
    await callerIds.deleteAllOf(accountSid);
    await clients.deleteAllOf(accountSid);
    await applications.deleteAllOf(accountSid);
  });
  accounts.onMigrated((accountSid, organizationSid) =>
    clients.moveToOrganization(accountSid, organizationSid),
  );
  return {
    calls,
    applications,
    clients,
    numbers,
    callerIds,
    notifications,
    notifier,
    recordings,
    conferences,
    recordingStorage,
    recordingService,
    gateways,
    profiles,
    profileResolver,
  };
}
