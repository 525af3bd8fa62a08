/**
 * sox and espeak-ng as child processes: all resampling, transcoding and synthesis happen there,
 * never on the engine's clock thread (field notes §2b: an in-process sinc resample blocked the loop
 * for ~100 ms).
 */
import { spawn } from 'node:child_process';
import { MEDIA } from './constants.js';

/** Exit code (null when killed or not started) and the first 4 KiB of stderr. */
export interface RunResult {
  readonly code: number | null;
  readonly stderr: string;
}

/** Runs a program with a kill timeout; `stdin` is written and closed. Never rejects. */
export function run(cmd: string, args: readonly string[], stdin?: string): Promise<RunResult> {
  return new Promise((resolve) => {
    let stderr = '';
    let settled = false;
    const done = (r: RunResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const child = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done({ code: null, stderr: `${cmd} timed out after ${MEDIA.CONVERT_TIMEOUT_MS} ms` });
    }, MEDIA.CONVERT_TIMEOUT_MS);
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    child.on('error', (err) => done({ code: null, stderr: err.message }));
    child.on('close', (code) => done({ code, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(stdin ?? '');
  });
}

/** Converts any audio file sox can read into an 8 kHz mono 16-bit PCM WAV. */
export async function soxTo8kWav(input: string, output: string, inputType?: string): Promise<RunResult> {
  const typeArgs = inputType ? ['-t', inputType] : [];
  return run('sox', [
    '-V1',
    ...typeArgs,
    input,
    '-r',
    String(MEDIA.SAMPLE_RATE),
    '-c',
    '1',
    '-b',
    '16',
    '-e',
    'signed-integer',
    '-t',
    'wav',
    output,
  ]);
}
