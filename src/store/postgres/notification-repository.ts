/** Postgres implementation of the NotificationStore port. */
import type {
  Notification,
  NotificationFilter,
  NotificationSort,
  NotificationStore,
  SortOrder,
} from '../notification-store.js';
import { type Db, sql } from './db.js';
import { orderBy } from './sql-helpers.js';

type Row = Record<string, unknown>;

const toNotification = (r: Row): Notification => ({
  sid: r.sid as string,
  accountSid: r.account_sid as string,
  callSid: (r.call_sid as string | null) ?? null,
  apiVersion: (r.api_version as string | null) ?? null,
  log: r.log === 1 ? 1 : 0,
  errorCode: r.error_code as number,
  moreInfo: r.more_info as string,
  messageText: r.message_text as string,
  messageDate: r.message_date as Date,
  requestUrl: (r.request_url as string | null) ?? null,
  requestMethod: (r.request_method as string | null) ?? null,
  requestVariables: (r.request_variables as string | null) ?? null,
  responseHeaders: (r.response_headers as string | null) ?? null,
  responseBody: (r.response_body as string | null) ?? null,
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

const SORT_COLUMNS: Record<NotificationSort, string> = {
  DateCreated: 'date_created',
  Log: 'log',
  ErrorCode: 'error_code',
  CallSid: 'call_sid',
  MessageText: 'message_text',
};

export class PgNotificationStore implements NotificationStore {
  constructor(private readonly db: Db) {}

  async insert(n: Notification): Promise<void> {
    await this.db.query(sql`
      INSERT INTO notifications (sid, account_sid, call_sid, api_version, log, error_code, more_info, message_text,
        message_date, request_url, request_method, request_variables, response_headers, response_body, date_created,
        date_updated)
      VALUES (${n.sid}, ${n.accountSid}, ${n.callSid}, ${n.apiVersion}, ${n.log}, ${n.errorCode}, ${n.moreInfo},
        ${n.messageText}, ${n.messageDate}, ${n.requestUrl}, ${n.requestMethod}, ${n.requestVariables},
        ${n.responseHeaders}, ${n.responseBody}, ${n.dateCreated}, ${n.dateUpdated})`);
  }

  async get(accountSid: string, sid: string): Promise<Notification | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM notifications WHERE sid = ${sid} AND account_sid = ${accountSid}`,
    );
    return row ? toNotification(row) : null;
  }

  async list(
    f: NotificationFilter,
    sort: SortOrder<NotificationSort>,
    page: { offset: number; limit: number },
    cap: number,
  ) {
    const where = [sql`account_sid = ${f.accountSid}`];
    if (f.callSid !== undefined) where.push(sql`call_sid = ${f.callSid}`);
    if (f.startTime !== undefined) where.push(sql`date_created >= ${f.startTime}`);
    if (f.endTime !== undefined) where.push(sql`date_created <= ${f.endTime}`);
    if (f.errorCode !== undefined) where.push(sql`error_code = ${f.errorCode}`);
    if (f.requestUrl !== undefined) where.push(sql`request_url = ${f.requestUrl}`);
    if (f.messageText !== undefined) {
      where.push(sql`message_text ILIKE ${`%${f.messageText.replace(/[%_\\]/g, '\\$&')}%`}`);
    }
    const cond = sql.join(where, sql` AND `);
    const [count] = await this.db.query(sql`SELECT count(*)::int AS n FROM notifications WHERE ${cond}`);
    const total = Math.min((count?.n as number) ?? 0, cap);
    const limit = Math.max(0, Math.min(page.limit, total - page.offset));
    const rows =
      limit === 0
        ? []
        : await this.db.query(
            sql`SELECT * FROM notifications WHERE ${cond} ORDER BY ${orderBy(SORT_COLUMNS[sort.by], sort.direction)}
                LIMIT ${limit} OFFSET ${page.offset}`,
          );
    return { total, items: rows.map(toNotification) };
  }
}
