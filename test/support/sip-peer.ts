/**
 * A bare SIP peer for tests that need exact bytes on the wire (hostile or malformed messages): a
 * UDP socket on a loopback address of its own, raw sends, and answers collected by Via branch or
 * Call-ID. TCP sends open one connection per message and read what comes back.
 */
import { createSocket, type Socket } from 'node:dgram';
import { connect } from 'node:net';

export const statusOf = (m: string): number => Number(/^SIP\/2\.0 (\d{3})/.exec(m)?.[1] ?? 0);

export class SipPeer {
  readonly inbox: string[] = [];
  private constructor(
    private readonly socket: Socket,
    readonly address: string,
    readonly port: number,
  ) {}

  static async open(address = '127.0.0.2'): Promise<SipPeer> {
    const socket = createSocket('udp4');
    await new Promise<void>((r) => socket.bind(0, address, () => r()));
    const peer = new SipPeer(socket, address, socket.address().port);
    socket.on('message', (m, rinfo) => {
      const text = m.toString('latin1');
      peer.inbox.push(text);
      if (peer.autoAck) peer.ackFinal(text, rinfo.port, rinfo.address);
    });
    return peer;
  }

  /** Acknowledge non-2xx finals to INVITEs, so the server stops retransmitting them (§17.1.1.3). */
  autoAck = false;

  private ackFinal(rs: string, port: number, host: string): void {
    if (statusOf(rs) < 300 || !/^CSeq:[ \t]*(\d+)[ \t]+INVITE[ \t]*$/im.test(rs)) return;
    const head = rs.slice(0, rs.indexOf('\r\n\r\n')).split('\r\n');
    const pick = (re: RegExp) => head.find((l) => re.test(l));
    const via = pick(/^(?:Via|v)[ \t]*:/i);
    const seq = /^CSeq:[ \t]*(\d+)/im.exec(rs)?.[1];
    const copied = [pick(/^(?:From|f)[ \t]*:/i), pick(/^(?:To|t)[ \t]*:/i), pick(/^(?:Call-ID|i)[ \t]*:/i)];
    if (!via || copied.some((l) => l === undefined)) return;
    const ack = [`ACK sip:ack@${host}:${port} SIP/2.0`, via, ...(copied as string[]), `CSeq: ${seq} ACK`];
    this.send(`${[...ack, 'Max-Forwards: 70', 'Content-Length: 0', '', ''].join('\r\n')}`, port, host);
  }

  send(bytes: string | Buffer, port: number, host = '127.0.0.1'): void {
    this.socket.send(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes, port, host);
  }

  /** Answers that carry `key` (a branch or Call-ID). */
  answers(key: string): string[] {
    return this.inbox.filter((m) => m.includes(key));
  }

  /** Waits for a final answer carrying `key`; null when none came within `ms`. */
  async final(key: string, ms = 5_000): Promise<string | null> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const f = this.answers(key).find((m) => statusOf(m) >= 200);
      if (f) return f;
      await new Promise((r) => setTimeout(r, 10));
    }
    return null;
  }

  close(): void {
    this.socket.close();
  }
}

/** Sends `bytes` over a new TCP connection and resolves with everything read within `ms`. */
export function tcpExchange(bytes: Buffer, port: number, ms: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const s = connect({ host, port, localAddress: '127.0.0.2' });
    const done = () => {
      clearTimeout(timer);
      s.destroy();
      resolve(got);
    };
    const timer = setTimeout(done, ms);
    s.on('data', (d) => {
      got += d.toString('latin1');
      if (/^SIP\/2\.0 [2-6]\d\d/m.test(got)) done();
    });
    s.on('error', done);
    s.on('close', done);
    s.write(bytes);
  });
}

let seq = 0;

export interface RequestSpec {
  readonly method?: string;
  readonly uri?: string;
  readonly from?: string;
  readonly fromTag?: string;
  readonly to?: string;
  readonly callId?: string;
  readonly cseq?: number;
  readonly branch?: string;
  readonly via?: string;
  readonly extra?: readonly string[];
  readonly body?: string;
  readonly contentType?: string;
}

/** A well-formed request (UDP Via from the peer); every part can be replaced. */
export function sipRequest(serverPort: number, o: RequestSpec = {}): { text: string; branch: string } {
  seq++;
  const method = o.method ?? 'OPTIONS';
  const branch = o.branch ?? `z9hG4bK-peer-${process.pid}-${seq}`;
  const body = o.body ?? '';
  const text = [
    `${method} ${o.uri ?? `sip:service@127.0.0.1:${serverPort}`} SIP/2.0`,
    `Via: ${o.via ?? 'SIP/2.0/UDP 127.0.0.2:5999'};branch=${branch}`,
    `From: ${o.from ?? '<sip:peer@carrier.invalid>'};tag=${o.fromTag ?? `f${seq}`}`,
    `To: ${o.to ?? '<sip:service@127.0.0.1>'}`,
    `Call-ID: ${o.callId ?? `peer-${process.pid}-${seq}@carrier.invalid`}`,
    `CSeq: ${o.cseq ?? 1} ${method}`,
    'Max-Forwards: 70',
    ...(method === 'INVITE' ? [`Contact: <sip:peer@127.0.0.2:5999>`] : []),
    ...(o.extra ?? []),
    ...(body ? [`Content-Type: ${o.contentType ?? 'application/sdp'}`] : []),
    `Content-Length: ${Buffer.byteLength(body, 'latin1')}`,
    '',
    body,
  ].join('\r\n');
  return { text, branch };
}

/** A minimal G.711 offer. */
export const OFFER = [
  'v=0',
  'o=- 1 1 IN IP4 127.0.0.2',
  's=-',
  'c=IN IP4 127.0.0.2',
  't=0 0',
  'm=audio 40000 RTP/AVP 0',
  'a=rtpmap:0 PCMU/8000',
  '',
].join('\r\n');
