/**
 * deliver_sm / data_sm from the SMSC on one bind: delivery receipts (matched to submitted message
 * ids, parked when they beat their submit_sm_resp) and MO messages (reassembled when concatenated,
 * answered only once the MO handler has settled; see `MoHandler`).
 */
import type { PDU, Session } from 'smpp';
import type { Logger } from '../logger.js';
import { concatFromUdh, decodePayload, splitUdh } from './encoding.js';
import { CommandStatus, MessageStateStat, mapReceiptStat, SmppError } from './errors.js';
import type { LinkCore } from './link-core.js';
import type { SmppDeliverSmEvent } from './port.js';
import { ReassemblyBuffer } from './reassembly.js';
import { normaliseMessageId, parseReceiptText } from './receipt.js';

const ESM_UDHI = 0x40;
const ESM_RECEIPT_MASK = 0x3c;

/** Answers an inbound request once (the connection owns the session and the write batching). */
export type Answer = (session: Session, pdu: PDU, status: number) => void;

/** Takes the deliver_sm of one connection. */
export class DeliverHandler {
  readonly #reassembly: ReassemblyBuffer;

  constructor(
    private readonly name: string,
    private readonly core: LinkCore,
    private readonly log: Logger,
    private readonly answer: Answer,
  ) {
    this.#reassembly = new ReassemblyBuffer({
      timeoutMs: core.opts.reassemblyTimeoutMs,
      maxEntries: core.opts.reassemblyMaxEntries,
      onExpired: (key, received, total) =>
        this.log.warn({ key, received, total, errorCode: 30009 }, 'smpp segments expired before reassembly'),
    });
  }

  #rawMessage(pdu: PDU): { ies: Buffer[]; text: string } {
    const sm = pdu.short_message;
    const payload =
      sm === undefined ||
      (typeof sm === 'object' && !Buffer.isBuffer(sm) && (sm.message === '' || sm.message.length === 0))
        ? (pdu.message_payload ?? sm)
        : sm;
    const dc = pdu.data_coding ?? 0;
    if (payload === undefined) return { ies: [], text: '' };
    if (typeof payload === 'string') return { ies: [], text: payload };
    if (Buffer.isBuffer(payload)) {
      if ((pdu.esm_class ?? 0) & ESM_UDHI) {
        const { ies, payload: body } = splitUdh(payload);
        return { ies, text: decodePayload(body, dc) };
      }
      return { ies: [], text: decodePayload(payload, dc) };
    }
    const text = typeof payload.message === 'string' ? payload.message : decodePayload(payload.message, dc);
    return { ies: payload.udh ?? [], text };
  }

  /** A deliver_sm or data_sm: a receipt or (a segment of) an MO. */
  take(session: Session, pdu: PDU): void {
    const { ies, text } = this.#rawMessage(pdu);
    const isReceipt =
      ((pdu.esm_class ?? 0) & ESM_RECEIPT_MASK) !== 0 || pdu.receipted_message_id !== undefined;
    if (isReceipt) {
      // Receipts are idempotent on our side (matched by id): acknowledged first, then matched.
      this.answer(session, pdu, CommandStatus.ESME_ROK);
      this.#onReceipt(pdu, text);
      return;
    }
    const from = pdu.source_addr ?? '';
    const to = pdu.destination_addr ?? '';
    const concat = concatFromUdh(ies);
    const dataCoding = pdu.data_coding ?? 0;
    const event = { type: 'smpp.deliverSm', from, to, dataCoding, connection: this.name } as const;
    if (!concat) {
      this.#takeMo(session, pdu, { ...event, body: text, segments: 1 }, () => {});
      return;
    }
    const full = this.#reassembly.addUndoable({ source: from, destination: to, ...concat, text });
    if (full === null) {
      this.answer(session, pdu, CommandStatus.ESME_ROK);
      return;
    }
    this.#takeMo(session, pdu, { ...event, body: full.text, segments: concat.total }, full.undo);
  }

  /**
   * Hands a complete MO to the handler and answers its (last) deliver_sm with the outcome (see
   * `MoHandler`). Refused for now: `undo` keeps the other segments, so the SMSC's retry completes it.
   */
  #takeMo(session: Session, pdu: PDU, event: SmppDeliverSmEvent, undo: () => void): void {
    this.core.emit(event);
    const handler = this.core.moHandler;
    if (!handler) {
      this.answer(session, pdu, CommandStatus.ESME_ROK);
      return;
    }
    let handled: Promise<void>;
    try {
      handled = handler(event);
    } catch (err) {
      handled = Promise.reject(err);
    }
    handled
      .then(
        () => this.answer(session, pdu, CommandStatus.ESME_ROK),
        (err: unknown) => {
          const status =
            err instanceof SmppError && err.commandStatus > 0
              ? err.commandStatus
              : CommandStatus.ESME_RX_T_APPN;
          if (status === CommandStatus.ESME_RX_T_APPN) undo();
          this.log.warn({ err, status, from: event.from, to: event.to }, 'smpp MO refused');
          this.answer(session, pdu, status);
        },
      )
      .catch((err: unknown) => this.log.error({ err }, 'smpp MO answer failed'));
  }

  #onReceipt(pdu: PDU, text: string): void {
    const parsed = parseReceiptText(text);
    const rawId = pdu.receipted_message_id ?? parsed?.id;
    const stat =
      parsed?.stat ??
      (pdu.message_state !== undefined ? MessageStateStat[pdu.message_state] : undefined) ??
      'UNKNOWN';
    if (!rawId) {
      this.log.warn({ text }, 'smpp receipt without message id ignored');
      return;
    }
    const err = parsed?.err ?? null;
    const key = normaliseMessageId(rawId);
    const dedupeKey = `${key}|${stat}`;
    const emit = (matched: boolean, id: string): void => {
      if (this.core.seenReceipts.has(dedupeKey)) return;
      this.core.seenReceipts.set(dedupeKey, true);
      const mapped = mapReceiptStat(stat, err ?? undefined);
      this.core.emit({
        type: 'smpp.receipt',
        messageId: id,
        stat,
        err,
        outcome: mapped.outcome,
        errorCode: mapped.errorCode,
        matched,
        connection: this.name,
      });
    };
    const known = this.core.submitted.get(key);
    if (known !== undefined) {
      emit(true, known);
      return;
    }
    this.core.sweepParked(Date.now());
    if (!this.core.parked.has(key)) this.core.parked.set(key, { at: Date.now(), emit });
  }
}
