/** Postgres implementation of the GatewayStore port; changes are announced through a bus (Redis pub/sub). */
import type { Gateway, GatewayChange, GatewayPatch, GatewayStore } from '../gateway-store.js';
import { type Db, sql } from './db.js';
import { updateSet } from './sql-helpers.js';

type Row = Record<string, unknown>;

const toGateway = (r: Row): Gateway => ({
  sid: r.sid as string,
  accountSid: r.account_sid as string,
  friendlyName: r.friendly_name as string,
  userName: (r.user_name as string | null) ?? null,
  password: (r.password as string | null) ?? null,
  proxy: r.proxy as string,
  register: r.register as boolean,
  ttl: r.ttl as number,
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

const COLUMNS: Record<keyof GatewayPatch, string> = {
  friendlyName: 'friendly_name',
  userName: 'user_name',
  password: 'password',
  proxy: 'proxy',
  register: 'register',
  ttl: 'ttl',
};

/** Carries gateway changes to every node (including this one). */
export interface GatewayBus {
  publish(change: GatewayChange): Promise<void>;
  subscribe(listener: (change: GatewayChange) => void): () => void;
}

export class PgGatewayStore implements GatewayStore {
  constructor(
    private readonly db: Db,
    private readonly bus: GatewayBus,
  ) {}

  async insert(g: Gateway): Promise<void> {
    await this.db.query(sql`
      INSERT INTO gateways (sid, account_sid, friendly_name, user_name, password, proxy, register, ttl, date_created,
        date_updated)
      VALUES (${g.sid}, ${g.accountSid}, ${g.friendlyName}, ${g.userName}, ${g.password}, ${g.proxy}, ${g.register},
        ${g.ttl}, ${g.dateCreated}, ${g.dateUpdated})`);
    await this.bus.publish({ kind: 'upsert', gateway: g });
  }

  async get(accountSid: string, sid: string): Promise<Gateway | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM gateways WHERE sid = ${sid} AND account_sid = ${accountSid}`,
    );
    return row ? toGateway(row) : null;
  }

  async list(accountSid: string): Promise<Gateway[]> {
    return (
      await this.db.query(
        sql`SELECT * FROM gateways WHERE account_sid = ${accountSid} ORDER BY date_created, sid`,
      )
    ).map(toGateway);
  }

  async listAll(): Promise<Gateway[]> {
    return (await this.db.query(sql`SELECT * FROM gateways ORDER BY date_created, sid`)).map(toGateway);
  }

  async update(accountSid: string, sid: string, patch: GatewayPatch): Promise<Gateway | null> {
    const [row] = await this.db.query(
      sql`UPDATE gateways SET ${updateSet(patch, COLUMNS)} WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING *`,
    );
    if (!row) return null;
    const g = toGateway(row);
    await this.bus.publish({ kind: 'upsert', gateway: g });
    return g;
  }

  async delete(accountSid: string, sid: string): Promise<boolean> {
    const rows = await this.db.query(
      sql`DELETE FROM gateways WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING sid`,
    );
    if (rows.length > 0) await this.bus.publish({ kind: 'delete', sid });
    return rows.length > 0;
  }

  watch(onChange: (change: GatewayChange) => void): () => void {
    return this.bus.subscribe(onChange);
  }
}
