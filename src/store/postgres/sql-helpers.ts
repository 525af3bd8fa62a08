/** Small shared pieces of SQL building for the repositories. */
import { type SQLQuery, sql } from './db.js';

/** `col = value, …, date_updated = now()` for the defined members of a patch. */
export function updateSet<P extends object>(patch: P, columns: Record<keyof P, string>): SQLQuery {
  const sets = Object.entries(patch)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => sql`${sql.ident(columns[k as keyof P])} = ${v}`);
  sets.push(sql`date_updated = now()`);
  return sql.join(sets, sql`, `);
}

/** `column asc|desc, sid asc|desc`: the sid makes every order total, so pages never overlap (NULLs last ascending, first descending: Postgres default). */
export function orderBy(column: string, direction: 'asc' | 'desc'): SQLQuery {
  const dir = direction === 'desc' ? sql`DESC` : sql`ASC`;
  return sql`${sql.ident(column)} ${dir}, sid ${dir}`;
}
