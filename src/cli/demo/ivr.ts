/**
 * The demo's own markup server: a small IVR for the demo number, served by the demo process on
 * loopback (a separate listener, so the product's HTTP app carries no demo routes).
 *
 *   GET|POST /demo/hello.xml     greeting inside a one-key <Gather>
 *   POST     /demo/gathered.xml  says the key back, records a message (<Record>), hangs up
 *   POST     /demo/recorded.xml  thanks the caller and hangs up
 *   GET      /demo/greeting.wav  the bundled greeting (8 kHz mono PCM: needs neither sox nor TTS)
 *
 * Without espeak-ng on PATH the greeting is the bundled WAV (<Play>) instead of <Say>, so a first
 * call on a fresh machine hears it; the other prompts are <Say> and are skipped (with a
 * Notification) until espeak-ng is installed.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export const GREETING_WAV = join(import.meta.dirname, 'greeting-8k.wav');
export const GREETING_TEXT = 'Welcome to the Switchboard demo. Press a key on your phone.';

/** What the IVR saw, for the demo's console and its test. */
export interface IvrEvent {
  readonly kind: 'answered' | 'gathered' | 'recorded';
  readonly callSid: string;
  readonly digits?: string;
  readonly recordingUrl?: string;
}

export interface DemoIvr {
  /** Base URL of the markup, e.g. `http://127.0.0.1:41234/demo`. */
  readonly url: string;
  close(): Promise<void>;
}

const xml = (body: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Response>${body}</Response>\n`;

const escapeXml = (s: string): string =>
  s.replace(/[<>&'"]/g, (c) => `&${{ '<': 'lt', '>': 'gt', '&': 'amp', "'": 'apos', '"': 'quot' }[c]};`);

/** The documents, pure, so that they can be read (and tested) without a server. */
export const ivrMarkup = {
  hello: (tts: boolean): string =>
    xml(
      `<Gather numDigits="1" timeout="10" action="gathered.xml" method="POST">` +
        (tts ? `<Say>${GREETING_TEXT}</Say>` : '<Play>greeting.wav</Play>') +
        `</Gather><Say>No key was pressed. Goodbye.</Say><Hangup/>`,
    ),
  gathered: (digits: string): string =>
    xml(
      `<Say>You pressed ${escapeXml(digits.split('').join(' '))}.</Say>` +
        `<Say>After the beep, leave a message, then press pound.</Say>` +
        `<Record maxLength="30" timeout="3" finishOnKey="#" action="recorded.xml" method="POST"/>` +
        `<Say>Goodbye.</Say><Hangup/>`,
    ),
  recorded: (): string => xml(`<Say>Thank you, your message was recorded. Goodbye.</Say><Hangup/>`),
};

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const query = new URL(req.url ?? '/', 'http://x').searchParams;
  if (req.method !== 'POST') return query;
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    // Only our own server posts here; a bound keeps a stray client from growing memory.
    if (body.length > 65_536) break;
  }
  return new URLSearchParams(body);
}

/** Starts the IVR's markup server on `host:port` (0 = any free port). */
export async function startDemoIvr(o: {
  readonly host?: string;
  readonly port?: number;
  /** Whether <Say> can be used for the greeting (espeak-ng present). */
  readonly tts: boolean;
  readonly onEvent?: (e: IvrEvent) => void;
}): Promise<DemoIvr> {
  const greeting = await readFile(GREETING_WAV);
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const form = await formOf(req);
      const callSid = form.get('CallSid') ?? '';
      const send = (status: number, type: string, body: string | Buffer): void => {
        res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      };
      const markup = (body: string): void => send(200, 'application/xml', body);
      if (path === '/demo/hello.xml') {
        o.onEvent?.({ kind: 'answered', callSid });
        markup(ivrMarkup.hello(o.tts));
      } else if (path === '/demo/gathered.xml') {
        const digits = form.get('Digits') ?? '';
        o.onEvent?.({ kind: 'gathered', callSid, digits });
        markup(ivrMarkup.gathered(digits));
      } else if (path === '/demo/recorded.xml') {
        o.onEvent?.({ kind: 'recorded', callSid, recordingUrl: form.get('RecordingUrl') ?? '' });
        markup(ivrMarkup.recorded());
      } else if (path === '/demo/greeting.wav' && (req.method === 'GET' || req.method === 'HEAD')) {
        send(200, 'audio/wav', greeting);
      } else {
        send(404, 'text/plain', 'not found\n');
      }
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve());
  });
  const a = server.address() as AddressInfo;
  return {
    url: `http://${a.address}:${a.port}/demo`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
