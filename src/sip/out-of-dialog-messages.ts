/**
 * SIP MESSAGE outside a dialog (RFC 3428), both ways: one we send (one digest retry on 401/407, its
 * final status announced as `sip.messageResult`) and one we receive (handed to the messaging layer,
 * which says the status to answer).
 */
import type { Logger } from 'pino';
import { retryWithCredentials } from './digest.js';
import type { Flow } from './flow.js';
import { lowerKeys, nameAddr, party } from './leg-parts.js';
import type { LegTable } from './leg-table.js';
import { headerText, newCallId, newTag, type SipRequest } from './message.js';
import type { InboundInvite, OutboundMessage, Party } from './port.js';
import type { SipStack } from './stack.js';

export type MessageHandler = (m: {
  from: Party;
  to: Party;
  requestUri: string;
  contentType: string;
  body: string;
  source: Flow;
  /** The client that sent it, when it authenticated (digest) as one of ours. */
  client?: InboundInvite['client'];
}) => Promise<number>;

export class OutOfDialogMessages {
  private handler: MessageHandler | null = null;

  constructor(
    private readonly stack: SipStack,
    private readonly table: LegTable,
    private readonly log: Logger,
  ) {}

  /** The handler for MESSAGE outside a dialog; returns the status to answer. Without one: 404. */
  onMessage(handler: MessageHandler): void {
    this.handler = handler;
  }

  send(message: OutboundMessage): void {
    const send = (rq: SipRequest, retried: boolean) => {
      this.stack.send(
        rq,
        (rs) => {
          if (rs.status < 200) return;
          const retry = retried ? null : retryWithCredentials(rq, rs, message.credentials);
          if (retry) return send(retry, true);
          this.table.broadcast({
            type: 'sip.messageResult',
            requestId: message.requestId,
            status: rs.status,
            reason: rs.reason || '',
          });
        },
        message.flow ? { flow: message.flow } : { tenantTarget: true },
      );
    };
    send(
      {
        method: 'MESSAGE',
        uri: message.requestUri,
        version: '2.0',
        headers: {
          via: [],
          to: nameAddr(message.to, {}),
          from: nameAddr(message.from, { tag: newTag() }),
          'call-id': newCallId(this.stack.host),
          cseq: { seq: 1, method: 'MESSAGE' },
          'max-forwards': 70,
          ...(message.route?.length ? { route: message.route.map((uri) => ({ uri, params: {} })) } : {}),
          ...lowerKeys(message.headers),
          'content-type': message.contentType ?? 'text/plain',
        },
        content: message.body,
      },
      false,
    );
  }

  async received(rq: SipRequest, source: Flow, client?: InboundInvite['client']): Promise<void> {
    if (!this.handler) return void this.stack.respond(rq, 404);
    try {
      const status = await this.handler({
        from: party(rq.headers.from),
        to: party(rq.headers.to),
        requestUri: rq.uri,
        contentType: headerText(rq, 'content-type') ?? 'text/plain',
        body: rq.content ?? '',
        source,
        ...(client ? { client } : {}),
      });
      this.stack.respond(rq, status);
    } catch (err) {
      this.log.error({ err }, 'MESSAGE handler failed');
      this.stack.respond(rq, 500);
    }
  }
}
