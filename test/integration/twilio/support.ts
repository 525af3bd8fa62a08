/** Helpers of the Twilio SDK tests. */
import wavefile from 'wavefile';

/** `seconds` of a 440 Hz tone as 8 kHz 16-bit mono WAV. */
export function tone(seconds: number): Buffer {
  const samples = new Int16Array(8000 * seconds);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  const wav = new wavefile.WaveFile();
  wav.fromScratch(1, 8000, '16', samples);
  return Buffer.from(wav.toBuffer());
}

/** The text of a submit_sm as the smpp library decoded it (GSM/Latin-1 single part). */
export function smText(pdu: { short_message?: unknown }): string {
  const sm = pdu.short_message as { message?: string | Buffer } | Buffer | string | undefined;
  if (sm === undefined) return '';
  if (typeof sm === 'string') return sm;
  if (Buffer.isBuffer(sm)) return sm.toString('latin1');
  return typeof sm.message === 'string' ? sm.message : Buffer.from(sm.message ?? []).toString('latin1');
}
