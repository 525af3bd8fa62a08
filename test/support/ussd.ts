/**
 * USSD test helpers: a sipp run whose scenario logs the USSD messages it received (`<log>` lines
 * `WHAT …|message-type|ussd-string`), read back decoded.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SippOptions, type SippResult, startSipp } from './sipp.js';

/** One USSD message a scenario received. */
export interface LoggedUssd {
  /** INVITE, INFO or BYE. */
  readonly request: string;
  /** The other `|`-separated fields: message type and text, or the error code of a BYE. */
  readonly fields: readonly string[];
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** XML character and entity references as a parser would read them. */
export function decodeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, ref: string) => {
    if (ref.startsWith('#x') || ref.startsWith('#X'))
      return String.fromCodePoint(Number.parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(Number(ref.slice(1)));
    return ENTITIES[ref] ?? whole;
  });
}

export interface UssdSippRun {
  readonly localPort: number;
  readonly done: Promise<SippResult & { readonly messages: LoggedUssd[] }>;
  kill(): void;
}

/** Starts sipp with its `<log>` lines written to a temporary file, read when it ends. */
export async function startUssdSipp(o: SippOptions): Promise<UssdSippRun> {
  const dir = await mkdtemp(join(tmpdir(), 'ussd-sipp-'));
  const logFile = join(dir, 'messages.log');
  const sipp = await startSipp({ ...o, extra: [...(o.extra ?? []), '-trace_logs', '-log_file', logFile] });
  const done = sipp.done.then(async (r) => {
    const text = await readFile(logFile, 'utf8').catch(() => '');
    await rm(dir, { recursive: true, force: true });
    const messages = text
      .split('\n')
      .filter((l) => /^(INVITE|INFO|BYE) /.test(l))
      .map((l) => {
        const [head = '', ...fields] = l.split('|');
        return { request: head.split(' ')[0] ?? '', fields: fields.map(decodeXml) };
      });
    return { ...r, messages };
  });
  return { localPort: sipp.localPort, done, kill: () => sipp.kill() };
}

export async function runUssdSipp(o: SippOptions) {
  return (await startUssdSipp(o)).done;
}
