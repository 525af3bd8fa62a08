/**
 * A scriptable SMSC on the npm `smpp` server, for integration tests and the demo simulator.
 * Behaviours are switched at runtime through `behaviour`; every PDU received is recorded.
 * Listens on 127.0.0.1 and an ephemeral port.
 */
import type { AddressInfo } from 'node:net';
import smpp, { type PDU, type Session } from 'smpp';

export interface SmscBehaviour {
  /** Accepted credentials (system_id → password); empty = accept all. */
  accounts: Record<string, string>;
  /** Delay before submit_sm_resp, ms (0 = immediate). */
  respDelayMs: number;
  /** Fraction (0..1) of submit_sm answered with ESME_RTHROTTLED. */
  throttleFraction: number;
  /** Answer enquire_link? */
  answerEnquireLink: boolean;
  /** Send a receipt after this delay (ms), or null for none. */
  receiptDelayMs: number | null;
  /** Receipt stat for each message (default DELIVRD). */
  receiptStat: (destination: string) => string;
  /** Send the receipt BEFORE the submit_sm_resp. */
  receiptBeforeResp: boolean;
  /** Send receipts with TLVs only (receipted_message_id, message_state), no text. */
  receiptTextless: boolean;
  /** How many copies of each receipt to send (duplicates test idempotency). */
  receiptCopies: number;
  /** Drop the TCP connection when this many submit_sm are outstanding (null = never). */
  dropAtOutstanding: number | null;
  /** Drop the TCP connection after every N submit_sm received (null = never). */
  dropEverySubmits: number | null;
  /** Fixed command_status for every submit_sm (null = ok/throttle as above). */
  submitStatus: number | null;
  /** Record submit_sm but never answer it (an SMSC that stalls; the ESME may die meanwhile). */
  holdSubmitResps: boolean;
  /**
   * Answer submit_sm (respDelayMs 0) after the PDUs of the current socket read are taken, as an SMSC
   * that handles a read and then answers: `maxOutstanding` then counts the submit_sm the ESME had in
   * flight together (answered inline, it never exceeds 1).
   */
  respAfterRead: boolean;
  /**
   * Write what one turn of the event loop sends on a session (the answers to one read, the receipts
   * falling due together) in one socket write, as a production SMSC would, instead of one per PDU: the
   * benchmark's SMSC then costs its shared CPU less than the server it measures.
   */
  coalesceWrites: boolean;
}

export interface RecordedPdu {
  readonly session: number;
  readonly command: string;
  readonly pdu: PDU;
  readonly at: number;
}

export class TestSmsc {
  readonly received: RecordedPdu[] = [];
  readonly behaviour: SmscBehaviour = {
    accounts: {},
    respDelayMs: 0,
    throttleFraction: 0,
    answerEnquireLink: true,
    receiptDelayMs: null,
    receiptStat: () => 'DELIVRD',
    receiptBeforeResp: false,
    receiptCopies: 1,
    receiptTextless: false,
    dropAtOutstanding: null,
    dropEverySubmits: null,
    submitStatus: null,
    holdSubmitResps: false,
    respAfterRead: false,
    coalesceWrites: false,
  };
  /** destination_addr of every submit_sm answered with ESME_ROK, in order (duplicates kept). */
  readonly acknowledged: string[] = [];
  /** Highest number of submit_sm outstanding (received, not yet answered) on any session. */
  maxOutstanding = 0;
  binds = 0;
  unbinds = 0;
  drops = 0;
  readonly #server = smpp.createServer((s) => this.#onSession(s));
  readonly #sessions = new Set<Session>();
  readonly #bound = new Set<Session>();
  /** Receipts sent on a session and not yet acknowledged: redelivered if the session is lost. */
  readonly #unacked = new Map<Session, Set<() => void>>();
  #closed = false;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #corked = new Set<Session>();
  #nextId = 1000;
  #sessionNo = 0;
  #submitCount = 0;
  #random: () => number;

  constructor(random: () => number = Math.random) {
    this.#random = random;
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', () => resolve()));
    return (this.#server.address() as AddressInfo).port;
  }

  /** Listen on a given loopback port (the demo simulator); tests use listen(). */
  async listenOn(port: number, host = '127.0.0.1'): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(port, host, () => resolve()));
    return (this.#server.address() as AddressInfo).port;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  submits(): PDU[] {
    return this.received.filter((r) => r.command === 'submit_sm').map((r) => r.pdu);
  }

  count(command: string): number {
    return this.received.filter((r) => r.command === command).length;
  }

  /** With `coalesceWrites`: the session's socket is held until the timers and I/O of this turn are done. */
  #coalesce(session: Session): void {
    if (!this.behaviour.coalesceWrites || this.#corked.has(session)) return;
    this.#corked.add(session);
    session.socket.cork();
    setImmediate(() => {
      this.#corked.delete(session);
      session.socket.uncork();
    });
  }

  #later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
  }

  #onSession(session: Session): void {
    const no = ++this.#sessionNo;
    this.#sessions.add(session);
    let outstanding = 0;
    let bound = false;
    session.socket.setNoDelay(true);
    session.on('error', () => {});
    session.on('close', () => {
      this.#sessions.delete(session);
      this.#bound.delete(session);
      const pending = this.#unacked.get(session);
      this.#unacked.delete(session);
      if (pending && !this.#closed) for (const again of pending) this.#later(50, again);
    });
    const bind = (pdu: PDU): void => {
      const accounts = this.behaviour.accounts;
      const ok =
        Object.keys(accounts).length === 0 ||
        (pdu.system_id !== undefined && accounts[pdu.system_id] === pdu.password);
      if (ok) {
        bound = true;
        this.#bound.add(session);
        this.binds++;
      }
      session.send(pdu.response({ command_status: ok ? 0 : 0x0d, system_id: 'test-smsc' }));
    };
    session.on('pdu', (pdu: PDU) => {
      this.received.push({ session: no, command: pdu.command, pdu, at: Date.now() });
      switch (pdu.command) {
        case 'bind_transceiver':
        case 'bind_transmitter':
        case 'bind_receiver':
          bind(pdu);
          return;
        case 'enquire_link':
          if (this.behaviour.answerEnquireLink) session.send(pdu.response());
          return;
        case 'unbind':
          this.unbinds++;
          this.#bound.delete(session);
          session.send(pdu.response());
          session.close();
          return;
        case 'submit_sm':
          if (!bound) {
            session.send(pdu.response({ command_status: 0x04 }));
            return;
          }
          outstanding++;
          this.#submitCount++;
          this.maxOutstanding = Math.max(this.maxOutstanding, outstanding);
          if (this.behaviour.dropAtOutstanding !== null && outstanding >= this.behaviour.dropAtOutstanding) {
            this.behaviour.dropAtOutstanding = null;
            this.drops++;
            this.#bound.delete(session);
            session.destroy();
            return;
          }
          if (
            this.behaviour.dropEverySubmits !== null &&
            this.#submitCount % this.behaviour.dropEverySubmits === 0
          ) {
            this.drops++;
            this.#bound.delete(session);
            session.destroy();
            return;
          }
          if (this.behaviour.holdSubmitResps) return;
          this.#answerSubmit(session, pdu, () => outstanding--);
          return;
        case 'deliver_sm_resp':
        case 'generic_nack':
          return;
        default:
          if (!pdu.isResponse()) session.send(pdu.response());
      }
    });
  }

  #answerSubmit(session: Session, pdu: PDU, done: () => void): void {
    const b = this.behaviour;
    const status = b.submitStatus ?? (this.#random() < b.throttleFraction ? 0x58 : 0);
    const id = status === 0 ? String(this.#nextId++) : '';
    const dest = pdu.destination_addr ?? '';
    const receipt = (): void => {
      if (status !== 0 || !pdu.registered_delivery || b.receiptDelayMs === null) return;
      const stat = b.receiptStat(dest);
      for (let i = 0; i < b.receiptCopies; i++)
        this.#routeReceipt(session, id, stat, dest, pdu.source_addr ?? '', 0);
    };
    const respond = (): void => {
      done();
      this.#coalesce(session);
      const sent = session.send(pdu.response({ command_status: status, message_id: id }));
      if (sent && status === 0) this.acknowledged.push(dest);
    };
    if (b.receiptBeforeResp && status === 0) {
      receipt();
      this.#later(Math.max(50, b.respDelayMs), respond);
      return;
    }
    const afterResp = (): void => {
      respond();
      if (status === 0 && b.receiptDelayMs !== null) this.#later(b.receiptDelayMs, receipt);
    };
    if (b.respDelayMs > 0) this.#later(b.respDelayMs, afterResp);
    else if (b.respAfterRead) setImmediate(afterResp);
    else afterResp();
  }

  /**
   * Like a store-and-forward SMSC: a receipt whose session is gone goes to another bound session,
   * or waits (100 ms steps, bounded) for one.
   */
  #routeReceipt(session: Session, id: string, stat: string, from: string, to: string, attempt: number): void {
    const live = (x: Session): boolean => this.#bound.has(x) && x.socket.writable && !x.socket.destroyed;
    const target = live(session) ? session : [...this.#bound].find(live);
    if (target) {
      // until deliver_sm_resp comes back, a lost session means: deliver it again elsewhere
      const again = (): void => this.#routeReceipt(target, id, stat, from, to, attempt + 1);
      let pending = this.#unacked.get(target);
      if (!pending) {
        pending = new Set();
        this.#unacked.set(target, pending);
      }
      pending.add(again);
      this.deliverReceipt(target, id, stat, from, to, () => pending.delete(again));
      return;
    }
    if (attempt < 300) this.#later(100, () => this.#routeReceipt(session, id, stat, from, to, attempt + 1));
  }

  /** Send a receipt deliver_sm with text and TLVs (SMPP v3.4 Appendix B). */
  deliverReceipt(
    session: Session,
    id: string,
    stat: string,
    from: string,
    to: string,
    onAck?: () => void,
  ): void {
    const states: Record<string, number> = { DELIVRD: 2, EXPIRED: 3, DELETED: 4, UNDELIV: 5, REJECTD: 8 };
    const err = stat === 'DELIVRD' ? '000' : '001';
    this.#coalesce(session);
    session.deliver_sm(
      {
        source_addr: from,
        destination_addr: to,
        esm_class: smpp.ESM_CLASS.MC_DELIVERY_RECEIPT,
        short_message: this.behaviour.receiptTextless
          ? ''
          : `id:${id} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} submit date:2611221200 done date:2611221201 stat:${stat} err:${err} text:x`,
        receipted_message_id: id,
        message_state: states[stat] ?? 7,
      },
      () => onAck?.(),
    );
  }

  /** command_status of every deliver_sm_resp answering an MO, in arrival order. */
  readonly moResps: Array<{ readonly to: string; readonly status: number }> = [];

  /** Send an MO deliver_sm (raw short_message octets, optional UDH) on every bound session. */
  deliverMo(fields: {
    from: string;
    to: string;
    shortMessage: Buffer;
    dataCoding: number;
    udh: boolean;
  }): void {
    for (const s of this.#sessions) {
      s.deliver_sm(
        {
          source_addr: fields.from,
          destination_addr: fields.to,
          esm_class: fields.udh ? 0x40 : 0,
          data_coding: fields.dataCoding,
          short_message: fields.shortMessage,
        },
        (resp: PDU) => this.moResps.push({ to: fields.to, status: resp.command_status }),
      );
    }
  }

  /** Live sessions (to push PDUs from a test). */
  sessions(): Session[] {
    return [...this.#sessions];
  }

  /** Write raw bytes to every session (garbage injection). */
  writeRaw(bytes: Buffer): void {
    for (const s of this.#sessions) s.socket.write(bytes);
  }

  /** Drop every TCP connection now. */
  dropAll(): void {
    for (const s of this.#sessions) s.destroy();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const s of this.#sessions) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
