/**
 * Text to speech: espeak-ng writes a WAV at its native rate, sox converts it to 8 kHz mono, and the
 * result is cached on disk by (voice, language, text). The markup's `voice` and `language`
 * (TwiML Say: man | woman | alice | Polly.*, BCP 47) are mapped to an espeak-ng voice and variant.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { run, soxTo8kWav } from './convert.js';
import { PlayError } from './errors.js';

/** BCP 47 tags (lower case) mapped to espeak-ng voices where the name differs from the tag. */
const LANGUAGE_VOICES: Readonly<Record<string, string>> = {
  'en-us': 'en-us',
  'en-gb': 'en-gb',
  'en-au': 'en-us',
  'en-ca': 'en-us',
  'en-in': 'en-gb',
  'es-es': 'es',
  'es-mx': 'es-419',
  'es-us': 'es-419',
  'fr-fr': 'fr-fr',
  'fr-ca': 'fr-fr',
  'de-de': 'de',
  'it-it': 'it',
  'pt-br': 'pt-br',
  'pt-pt': 'pt',
  'nl-nl': 'nl',
  'ja-jp': 'ja',
  'zh-cn': 'cmn',
  'zh-hk': 'yue',
  'zh-tw': 'cmn',
  'ko-kr': 'ko',
  'ru-ru': 'ru',
  'pl-pl': 'pl',
  'sv-se': 'sv',
  'da-dk': 'da',
  'nb-no': 'nb',
  'fi-fi': 'fi',
  'ca-es': 'ca',
};

/** Primary subtags espeak-ng ships a voice for (a subset; anything else falls back to en-us). */
const PRIMARY = new Set(
  'af am an ar as az ba be bg bn bpy bs ca cmn cs cy da de el en eo es et eu fa fi fr ga gd gn grc gu hak he hi hr ht hu hy hyw ia id io is it ja jbo ka kk kl kn ko kok ku ky la lb lfn lt lv mi mk ml mr ms mt my nb nci ne nl nog om or pa pap piqd pl pt py qu quc qya ro ru sd shn si sjn sk sl smj sq sr sv sw ta te th tk tn tr tt ug uk ur uz vi yue'.split(
    ' ',
  ),
);

/** Amazon Polly voices that are female (TwiML `Polly.<Name>`); others are rendered male. */
const FEMALE_POLLY = new Set(
  'aditi amy aria astrid ayanda bianca camila carla carmen celine chantal conchita dora emma ewa filiz gabrielle gwyneth hannah ines ivy joanna kajal karl kendra kimberly lea liv lotte lucia lupe mia mizuki naja nicole olivia penelope raveena salli seoyeon tatyana vicki vitoria zeina zhiyu'.split(
    ' ',
  ),
);

/** The espeak-ng `-v` argument for a markup voice and language, e.g. `en-us+f3`. */
export function espeakVoice(voice: string | undefined, language: string | undefined): string {
  const tag = (language ?? 'en-US').toLowerCase();
  const primary = tag.split('-')[0] ?? 'en';
  const base = LANGUAGE_VOICES[tag] ?? (PRIMARY.has(primary) ? primary : 'en-us');
  const v = (voice ?? 'man').toLowerCase();
  const polly = v.startsWith('polly.') ? v.slice(6).split('-')[0]! : null;
  const female = v === 'woman' || v === 'alice' || (polly !== null && FEMALE_POLLY.has(polly));
  return `${base}+${female ? 'f3' : 'm3'}`;
}

/** Synthesizes `text` into an 8 kHz WAV under `dir` (cached); returns its path. */
export async function synthesize(
  dir: string,
  text: string,
  voice: string | undefined,
  language: string | undefined,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<string> {
  const espeak = espeakVoice(voice, language);
  const key = createHash('sha256').update(`${espeak}\n${text}`).digest('hex');
  const out = join(dir, `${key}.wav`);
  if (
    await stat(out).then(
      (s) => s.size > 44,
      () => false,
    )
  ) {
    // Mark it used: pruning removes the least recently used first.
    const now = new Date();
    await utimes(out, now, now).catch(() => {});
    return out;
  }
  await mkdir(dir, { recursive: true });
  const nonce = `${process.pid}-${Math.random().toString(36).slice(2)}`;
  const raw = join(dir, `${key}.${nonce}.espeak.wav`);
  const tmp = join(dir, `${key}.${nonce}.tmp.wav`);
  try {
    let r = await run('espeak-ng', ['-v', espeak, '-w', raw, '--stdin'], text);
    if (r.code !== 0 && !espeak.startsWith('en-us')) {
      r = await run('espeak-ng', ['-v', 'en-us', '-w', raw, '--stdin'], text);
    }
    if (r.code !== 0) throw new PlayError('tts-failed', `espeak-ng failed: ${r.stderr.trim()}`);
    const c = await soxTo8kWav(raw, tmp);
    if (c.code !== 0) throw new PlayError('tts-failed', `sox failed on speech: ${c.stderr.trim()}`);
    await rename(tmp, out);
    await pruneDir(dir, maxBytes, out);
    return out;
  } finally {
    await rm(raw, { force: true });
    await rm(tmp, { force: true });
  }
}

/**
 * Keeps the `.wav` files of `dir` within `maxBytes`, deleting the least recently used (mtime,
 * refreshed on every use) first, never `keep`.
 */
export async function pruneDir(dir: string, maxBytes: number, keep: string): Promise<void> {
  if (!Number.isFinite(maxBytes)) return;
  const files: { path: string; size: number; mtime: number }[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith('.wav') || name.includes('.tmp.') || name.includes('.espeak.')) continue;
    const path = join(dir, name);
    const s = await stat(path).catch(() => null);
    if (s) files.push({ path, size: s.size, mtime: s.mtimeMs });
  }
  let total = files.reduce((n, f) => n + f.size, 0);
  for (const f of files.sort((a, b) => a.mtime - b.mtime)) {
    if (total <= maxBytes) break;
    if (f.path === keep) continue;
    await rm(f.path, { force: true });
    total -= f.size;
  }
}
