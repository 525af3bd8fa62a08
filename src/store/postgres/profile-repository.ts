/** Postgres implementation of the ProfileStore port. */
import type { Extension, Profile, ProfileStore } from '../profile-store.js';
import { type Db, sql } from './db.js';

type Row = Record<string, unknown>;

const toProfile = (r: Row): Profile => ({
  sid: r.sid as string,
  kind: r.kind as Profile['kind'],
  document: r.document,
  ownerAccountSid: (r.owner_account_sid as string | null) ?? null,
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

const toExtension = (r: Row): Extension => ({
  sid: r.sid as string,
  accountSid: r.account_sid as string,
  extensionName: r.extension_name as string,
  enabled: r.enabled as boolean,
  configurationData: r.configuration_data as Extension['configurationData'],
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

export class PgProfileStore implements ProfileStore {
  constructor(private readonly db: Db) {}

  async insert(p: Profile, linkTo?: string): Promise<void> {
    await this.db.tx(async (tx) => {
      await tx.query(sql`
        INSERT INTO profiles (sid, kind, document, owner_account_sid, date_created, date_updated)
        VALUES (${p.sid}, ${p.kind}, ${JSON.stringify(p.document)}::jsonb, ${p.ownerAccountSid}, ${p.dateCreated}, ${p.dateUpdated})`);
      if (linkTo) {
        await tx.query(sql`INSERT INTO profile_links (target_sid, profile_sid) VALUES (${linkTo}, ${p.sid})
          ON CONFLICT (target_sid) DO UPDATE SET profile_sid = EXCLUDED.profile_sid`);
      }
    });
  }

  async get(sid: string): Promise<Profile | null> {
    const [row] = await this.db.query(sql`SELECT * FROM profiles WHERE sid = ${sid}`);
    return row ? toProfile(row) : null;
  }

  async list(): Promise<Profile[]> {
    return (await this.db.query(sql`SELECT * FROM profiles ORDER BY date_created, sid`)).map(toProfile);
  }

  async update(sid: string, document: unknown): Promise<Profile | null> {
    const [row] = await this.db.query(
      sql`UPDATE profiles SET document = ${JSON.stringify(document)}::jsonb, date_updated = now() WHERE sid = ${sid} RETURNING *`,
    );
    return row ? toProfile(row) : null;
  }

  async delete(sid: string): Promise<boolean> {
    return (await this.db.query(sql`DELETE FROM profiles WHERE sid = ${sid} RETURNING sid`)).length > 0;
  }

  async link(profileSid: string, targetSid: string): Promise<void> {
    await this.db.query(sql`INSERT INTO profile_links (target_sid, profile_sid) VALUES (${targetSid}, ${profileSid})
      ON CONFLICT (target_sid) DO UPDATE SET profile_sid = EXCLUDED.profile_sid`);
  }

  async unlink(profileSid: string, targetSid: string): Promise<boolean> {
    const rows = await this.db.query(
      sql`DELETE FROM profile_links WHERE profile_sid = ${profileSid} AND target_sid = ${targetSid} RETURNING target_sid`,
    );
    return rows.length > 0;
  }

  async linkedTargets(profileSid: string): Promise<string[]> {
    return (
      await this.db.query(sql`SELECT target_sid FROM profile_links WHERE profile_sid = ${profileSid}`)
    ).map((r) => r.target_sid as string);
  }

  async firstLinked(targetSids: readonly string[]): Promise<string | null> {
    if (targetSids.length === 0) return null;
    const rows = await this.db.query(
      sql`SELECT target_sid, profile_sid FROM profile_links WHERE target_sid = ANY(${[...targetSids]})`,
    );
    const byTarget = new Map(rows.map((r) => [r.target_sid as string, r.profile_sid as string]));
    for (const t of targetSids) if (byTarget.has(t)) return byTarget.get(t) as string;
    return null;
  }

  async insertExtension(e: Extension): Promise<boolean> {
    const rows = await this.db.query(sql`
      INSERT INTO extensions (sid, account_sid, extension_name, enabled, configuration_data, date_created, date_updated)
      VALUES (${e.sid}, ${e.accountSid}, ${e.extensionName}, ${e.enabled}, ${JSON.stringify(e.configurationData)}::jsonb,
        ${e.dateCreated}, ${e.dateUpdated})
      ON CONFLICT (account_sid, extension_name) DO NOTHING RETURNING sid`);
    return rows.length > 0;
  }

  async getExtension(sid: string): Promise<Extension | null> {
    const [row] = await this.db.query(sql`SELECT * FROM extensions WHERE sid = ${sid}`);
    return row ? toExtension(row) : null;
  }

  async updateExtension(
    sid: string,
    patch: Partial<Pick<Extension, 'enabled' | 'configurationData' | 'accountSid'>>,
  ): Promise<Extension | null> {
    const sets = [sql`date_updated = now()`];
    if (patch.enabled !== undefined) sets.push(sql`enabled = ${patch.enabled}`);
    if (patch.accountSid !== undefined) sets.push(sql`account_sid = ${patch.accountSid}`);
    if (patch.configurationData !== undefined) {
      sets.push(sql`configuration_data = ${JSON.stringify(patch.configurationData)}::jsonb`);
    }
    const [row] = await this.db.query(
      sql`UPDATE extensions SET ${sql.join(sets, sql`, `)} WHERE sid = ${sid} RETURNING *`,
    );
    return row ? toExtension(row) : null;
  }

  async extensionOf(accountSid: string, name: string): Promise<Extension | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM extensions WHERE account_sid = ${accountSid} AND extension_name = ${name}`,
    );
    return row ? toExtension(row) : null;
  }
}
