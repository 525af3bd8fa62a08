/**
 * Framing of SIP over a byte stream (RFC 3261 §18.3): a message is its header section up to the
 * blank line plus Content-Length bytes of body. CRLFs between messages are skipped, and a CRLFCRLF
 * ping is answered with a CRLF pong (RFC 5626 §3.5.1). A header section or body over its limit ends
 * the connection: a peer that sends one is broken or hostile, and buffering it would grow without bound.
 */

export interface StreamLimits {
  /** Largest header section accepted, bytes. */
  readonly maxHeaderBytes: number;
  /** Largest body accepted, bytes. */
  readonly maxBodyBytes: number;
}

export interface FramedStream {
  message(raw: string): void;
  /** Answers a keep-alive ping. */
  pong(): void;
  /** The peer broke a limit: the connection is to be closed. */
  overflow(): void;
}

const CONTENT_LENGTH = /^(?:content-length|l)[ \t]*:[ \t]*(\d+)[ \t]*$/im;

/** Cuts the latin1 text a stream delivers into whole messages, chunk by chunk. */
export class StreamFramer {
  private buffer = '';

  constructor(
    private readonly limits: StreamLimits,
    private readonly out: FramedStream,
  ) {}

  push(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      if (this.buffer.startsWith('\r\n\r\n')) {
        this.out.pong();
        this.buffer = this.buffer.slice(4);
        continue;
      }
      const lead = this.buffer.match(/^(?:\r\n)+/);
      if (lead) this.buffer = this.buffer.slice(lead[0].length);
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) {
        if (this.buffer.length > this.limits.maxHeaderBytes) this.out.overflow();
        return;
      }
      if (end > this.limits.maxHeaderBytes) return void this.out.overflow();
      const m = CONTENT_LENGTH.exec(this.buffer.slice(0, end));
      const length = m ? Number(m[1]) : 0;
      if (length > this.limits.maxBodyBytes) return void this.out.overflow();
      if (this.buffer.length < end + 4 + length) return;
      const raw = this.buffer.slice(0, end + 4 + length);
      this.buffer = this.buffer.slice(end + 4 + length);
      this.out.message(raw);
    }
  }
}
