/**
 * A bare SIP-over-WebSocket client (RFC 7118, subprotocol `sip`) for tests: registers to
 * 127.0.0.1 with digest, reads what arrives, and answers requests with a status line of our choice.
 */
import WebSocket from 'ws';
import { authorize, readChallenge } from '../../src/sip/digest.js';

/** A bare SIP-over-WebSocket client (RFC 7118) that registers with digest and answers what it gets. */
export async function wsClient(port: number, login: string, password: string) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}`, 'sip');
  const received: string[] = [];
  ws.on('message', (d) => received.push(String(d)));
  await new Promise((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  const next = async (pred: (m: string) => boolean): Promise<string> => {
    const end = Date.now() + 10_000;
    while (Date.now() < end) {
      const i = received.findIndex(pred);
      if (i >= 0) return received.splice(i, 1)[0] as string;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no WS message; saw ${received.map((m) => m.split('\r\n')[0])}`);
  };
  const register = (cseq: number, auth?: string) =>
    [
      'REGISTER sip:127.0.0.1 SIP/2.0',
      `Via: SIP/2.0/WS ${login}.invalid;branch=z9hG4bKws${login}${cseq}`,
      `From: <sip:${login}@127.0.0.1>;tag=w1`,
      `To: <sip:${login}@127.0.0.1>`,
      `Call-ID: ws-reg-${login}`,
      `CSeq: ${cseq} REGISTER`,
      `Contact: <sip:${login}@${login}.invalid;transport=ws>`,
      'Expires: 300',
      'Max-Forwards: 70',
      ...(auth ? [`Authorization: ${auth}`] : []),
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
  ws.send(register(1));
  const challenge = await next((m) => m.startsWith('SIP/2.0 401'));
  const header = /^WWW-Authenticate:\s*Digest\s+(.*)$/im.exec(challenge)?.[1] as string;
  const params = Object.fromEntries(
    [...header.matchAll(/(\w+)=("[^"]*"|[^,\s]+)/g)].map((m) => [m[1], m[2]]),
  ) as Record<string, string>;
  const auth = authorize(
    readChallenge({ scheme: 'Digest', ...params })!,
    { username: login, password },
    'REGISTER',
    'sip:127.0.0.1',
  );
  const authText = `Digest ${Object.entries(auth!)
    .filter(([k]) => k !== 'scheme')
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')}`;
  ws.send(register(2, authText));
  const ok = await next((m) => /^SIP\/2\.0 [2-6]/.test(m));
  /** Answers a request with `status`, echoing its Via, From, To (with a tag), Call-ID and CSeq. */
  const answer = (rq: string, status: string) => {
    const head = rq.slice(0, rq.indexOf('\r\n\r\n')).split('\r\n');
    const pick = (name: string) => head.filter((l) => new RegExp(`^${name}:`, 'i').test(l));
    const [to] = pick('To');
    ws.send(
      [
        `SIP/2.0 ${status}`,
        ...pick('Via'),
        ...pick('From'),
        `${to};tag=ws${login}`,
        ...pick('Call-ID'),
        ...pick('CSeq'),
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
  };
  return { ws, ok, next, answer };
}
