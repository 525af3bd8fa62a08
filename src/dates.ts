/** Date formats of the wire (spec §General conventions 6). */

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** RFC 2822 in UTC, as the spec's examples: `Fri, 5 Jul 2013 22:15:53 +0000`. */
export function rfc2822(d: Date): string {
  return (
    `${DAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`
  );
}

/** RFC 2822 or null, for optional dates (StartTime, EndTime). */
export function rfc2822OrNull(d: Date | null | undefined): string | null {
  return d ? rfc2822(d) : null;
}

/**
 * Parses a list filter date: `YYYY-MM-DD` (midnight UTC) or `YYYY-MM-DDTHH:MM:SS` (UTC unless an
 * offset is given). Returns null when the value is not such a date.
 */
export function parseFilterDate(value: string): Date | null {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(
      value,
    );
  if (!m) return null;
  const iso = m[4]
    ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${normalizeZone(m[7])}`
    : `${m[1]}-${m[2]}-${m[3]}T00:00:00Z`;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

function normalizeZone(z: string | undefined): string {
  if (!z || z === 'Z') return 'Z';
  return z.includes(':') ? z : `${z.slice(0, 3)}:${z.slice(3)}`;
}
