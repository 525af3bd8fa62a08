/**
 * A minimal UDP SIP UAS for media tests: it answers sipp's INVITE with 200 OK carrying the SDP a
 * callback returns (the media endpoint's answer), and BYE with 200. Enough SIP for sipp to learn
 * where to send its pcap RTP; the real SIP stack is tested elsewhere.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';

export interface SipCall {
  readonly callId: string;
  readonly offer: string;
  byeReceived: boolean;
}

export class SipResponder {
  readonly calls = new Map<string, SipCall>();
  private readonly answers = new Map<string, string>();

  private constructor(
    private readonly socket: Socket,
    readonly address: string,
    readonly port: number,
    private readonly answer: (call: SipCall) => Promise<string>,
  ) {
    socket.on('message', (msg, rinfo) => {
      void this.onMessage(msg.toString('utf8'), rinfo);
    });
  }

  static async start(address: string, answer: (call: SipCall) => Promise<string>): Promise<SipResponder> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, address, () => resolve());
    });
    return new SipResponder(socket, address, socket.address().port, answer);
  }

  private async onMessage(text: string, rinfo: RemoteInfo): Promise<void> {
    const [head = '', body = ''] = text.split('\r\n\r\n');
    const lines = head.split('\r\n');
    const method = lines[0]?.split(' ')[0] ?? '';
    const header = (name: string): string[] =>
      lines.filter((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
    const callId = (header('Call-ID')[0] ?? '').slice(8).trim();
    const copy = [...header('Via'), ...header('From'), ...header('Call-ID'), ...header('CSeq')];
    const to = header('To')[0] ?? 'To: <sip:media@127.0.0.1>';
    if (method === 'INVITE') {
      let call = this.calls.get(callId);
      if (!call) {
        call = { callId, offer: body, byeReceived: false };
        this.calls.set(callId, call);
        this.answers.set(callId, await this.answer(call));
      }
      const sdp = this.answers.get(callId);
      if (sdp === undefined) return;
      this.reply(rinfo, '200 OK', [...copy, `${to};tag=media-${callId.length}`], sdp);
    } else if (method === 'BYE') {
      const call = this.calls.get(callId);
      if (call) call.byeReceived = true;
      this.reply(rinfo, '200 OK', [...copy, to], '');
    }
  }

  private reply(rinfo: RemoteInfo, status: string, headers: string[], body: string): void {
    const msg = [
      `SIP/2.0 ${status}`,
      ...headers,
      `Contact: <sip:media@${this.address}:${this.port}>`,
      ...(body ? ['Content-Type: application/sdp'] : []),
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ].join('\r\n');
    this.socket.send(msg, rinfo.port, rinfo.address);
  }

  close(): void {
    this.socket.close();
  }
}
