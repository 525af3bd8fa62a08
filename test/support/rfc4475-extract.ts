/**
 * Rebuilds the RFC 4475 torture-test fixtures from the RFC's own Appendix A ("Bit-Exact Archive of Each
 * Test Message"): a base64 text block, between "-- BEGIN MESSAGE ARCHIVE --" and "-- END MESSAGE ARCHIVE --",
 * of a gzip-compressed tar archive holding one <name>.dat file per message.
 *
 *   npx tsx test/support/rfc4475-extract.ts <rfc4475.txt | archive.b64> [--out DIR] [--check]
 *
 * The input is either the whole RFC text or just the archive block (test/fixtures/rfc4475/archive.b64).
 * Without --check it writes, into DIR (default test/fixtures/rfc4475): <name>.dat for each of the 49
 * messages catalogued in test/support/rfc4475.ts, SHA256SUMS, and archive.b64 (the block as it appears in
 * the input). With --check it writes nothing and fails if the files in DIR differ from what it would write.
 * Either way it fails if a message's bytes differ from the sha256 pinned in the catalogue.
 *
 * Decoding follows the RFC's own Perl recipe (Figure 58): of the lines between the two marker lines, keep the
 * ones that are a single token; page furniture (footers, running headers) has embedded spaces and is dropped.
 * Here the kept token must also be pure base64, and the marker lines must stand alone, so the recipe's own
 * listing (whose `if` line names both markers) is never taken for the archive.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { TORTURE_CASES } from './rfc4475.js';

const BEGIN = '-- BEGIN MESSAGE ARCHIVE --';
const END = '-- END MESSAGE ARCHIVE --';
const BASE64_LINE = /^[A-Za-z0-9+/]+={0,2}$/;

interface TarEntry {
  name: string;
  type: string;
  data: Buffer;
}

/** The archive block: the lines from the BEGIN marker line to the END marker line, both included. */
export function archiveBlock(text: string): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const start = lines.findIndex((l) => l.trim() === BEGIN);
  if (start < 0) throw new Error(`no line "${BEGIN}" in the input`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === END);
  if (end < 0) throw new Error(`no line "${END}" after "${BEGIN}"`);
  return lines.slice(start, end + 1);
}

/** The base64 payload of the block, page furniture removed. */
export function archivePayload(block: readonly string[]): string {
  return block
    .map((l) => l.trim())
    .filter((l) => BASE64_LINE.test(l))
    .join('');
}

/** A minimal ustar reader: regular files only, header checksums verified. */
export function untar(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break; // end-of-archive blocks
    const field = (start: number, length: number) =>
      header.toString('latin1', start, start + length).replace(/\0[\s\S]*$/, '');
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : (header[i] ?? 0);
    const recorded = Number.parseInt(field(148, 8).trim(), 8);
    if (recorded !== sum) throw new Error(`tar header at ${offset}: checksum ${recorded}, computed ${sum}`);
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const prefix = field(257, 6).startsWith('ustar') ? field(345, 155) : '';
    const name = prefix ? `${prefix}/${field(0, 100)}` : field(0, 100);
    const data = Buffer.from(tar.subarray(offset + 512, offset + 512 + size));
    if (data.length !== size)
      throw new Error(`tar entry ${name}: truncated (${data.length} of ${size} bytes)`);
    entries.push({ name, type: field(156, 1) || '0', data });
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function main(): number {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { out: { type: 'string', default: 'test/fixtures/rfc4475' }, check: { type: 'boolean' } },
  });
  const input = positionals[0];
  if (!input || positionals.length > 1) {
    console.error(
      'usage: tsx test/support/rfc4475-extract.ts <rfc4475.txt | archive.b64> [--out DIR] [--check]',
    );
    return 2;
  }
  const outDir = resolve(values.out);
  const text = readFileSync(input, 'latin1');
  const block = archiveBlock(text);
  const payload = archivePayload(block);
  const gz = Buffer.from(payload, 'base64');
  if (gz.toString('base64') !== payload) throw new Error('the archive block is not valid base64');
  const tar = gunzipSync(gz); // verifies the gzip CRC32 and length
  const files = new Map<string, Buffer>();
  for (const entry of untar(tar)) {
    if (entry.type !== '0') continue;
    if (!/^[a-z0-9]+\.dat$/i.test(entry.name)) throw new Error(`unexpected archive member "${entry.name}"`);
    files.set(entry.name.slice(0, -'.dat'.length), entry.data);
  }
  console.log(`archive: ${payload.length} base64 chars, ${gz.length} bytes gzip, ${files.size} files`);

  const problems: string[] = [];
  const catalogued = new Set(TORTURE_CASES.map((c) => c.name));
  // When given the whole RFC, the section text names every message ("Message Details : wsinv").
  const described = new Set([...text.matchAll(/Message Details : (\S+)/g)].map((m) => m[1] ?? ''));
  if (described.size > 0) {
    const missing = [...described].filter((n) => !catalogued.has(n));
    const extra = [...catalogued].filter((n) => !described.has(n));
    if (missing.length || extra.length)
      problems.push(`catalogue vs RFC sections: missing ${missing.join(',')}; not in RFC ${extra.join(',')}`);
  }
  for (const name of files.keys()) {
    if (!catalogued.has(name))
      console.log(`skipped ${name}.dat: in the archive, but no RFC 4475 section describes it`);
  }

  const outputs = new Map<string, Buffer>();
  const sums: string[] = [];
  for (const c of [...TORTURE_CASES].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const bytes = files.get(c.name);
    if (!bytes) {
      problems.push(`${c.name}.dat is not in the archive`);
      continue;
    }
    const hash = sha256(bytes);
    if (hash !== c.sha256) problems.push(`${c.name}.dat: sha256 ${hash}, catalogue pins ${c.sha256}`);
    outputs.set(`${c.name}.dat`, bytes);
    sums.push(`${hash}  ${c.name}.dat\n`);
  }
  outputs.set('SHA256SUMS', Buffer.from(sums.join(''), 'latin1'));

  if (values.check) {
    for (const [file, bytes] of outputs) {
      const path = join(outDir, file);
      if (!existsSync(path)) problems.push(`${file}: missing in ${outDir}`);
      else if (!readFileSync(path).equals(bytes)) problems.push(`${file}: differs from the archive`);
    }
    const committed = join(outDir, 'archive.b64');
    if (!existsSync(committed)) problems.push(`archive.b64: missing in ${outDir}`);
    else if (archivePayload(archiveBlock(readFileSync(committed, 'latin1'))) !== payload)
      problems.push('archive.b64: its base64 payload differs from the input');
  } else {
    mkdirSync(outDir, { recursive: true });
    for (const [file, bytes] of outputs) writeFileSync(join(outDir, file), bytes);
    writeFileSync(join(outDir, 'archive.b64'), `${block.join('\n')}\n`, 'latin1');
    console.log(`wrote ${outputs.size - 1} messages, SHA256SUMS and archive.b64 to ${outDir}`);
  }

  for (const p of problems) console.error(`rfc4475: ${p}`);
  if (problems.length === 0) console.log(values.check ? 'check: all fixtures match the archive' : 'ok');
  return problems.length === 0 ? 0 : 1;
}

process.exitCode = main();
