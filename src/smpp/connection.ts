/**
 * One SMSC bind of the SMPP link (states connecting → bound → disconnected → connecting ..., closed
 * at the end): persistent bind with enquire_link and capped exponential reconnect, and the send
 * window. The connection pulls segments from the link's shared queue while fewer than `window`
 * submit_sm are outstanding, so many are in flight at once; what it writes in one turn of the event
 * loop (submit_sm released together by a group commit of their `beforeSend`, the deliver_sm_resp of
 * one read of receipts) leaves in one socket write.
 */
import smpp, { type PDU, type Session } from 'smpp';
import type { Logger } from '../logger.js';
import { DeliverHandler } from './deliver.js';
import { CommandStatus, isRetryableStatus, SmppError } from './errors.js';
import type { LinkCore, Pumpable, SegmentJob, SendGate } from './link-core.js';
import type { LinkState } from './port.js';
import type { SmppConnectionConfig } from './url.js';

export class SmppConnection implements Pumpable {
  readonly name: string;
  state: LinkState = 'disconnected';
  #session: Session | null = null;
  readonly #inFlight = new Map<number, { job: SegmentJob; timer: NodeJS.Timeout }>();
  /** Jobs holding a window slot while their message's `beforeSend` runs. */
  #opening = 0;
  #backoffMs: number;
  #reconnectTimer: NodeJS.Timeout | null = null;
  #enquireTimer: NodeJS.Timeout | null = null;
  #pumpTimer: NodeJS.Timeout | null = null;
  readonly #deliver: DeliverHandler;
  /** The socket corked for the writes of this turn of the event loop (uncorked on the next tick). */
  #corked: Session | null = null;
  /** Inbound requests already answered (so a failure after the answer sends no second one). */
  readonly #answered = new WeakSet<PDU>();
  readonly #log: Logger;
  #drained: (() => void) | null = null;
  /** Highest number of outstanding submit_sm ever observed (for tests/benchmarks). */
  maxOutstanding = 0;

  constructor(
    readonly cfg: SmppConnectionConfig,
    readonly core: LinkCore,
  ) {
    this.name = `${cfg.systemId}@${cfg.host}:${cfg.port}`;
    this.#backoffMs = cfg.reconnectMinMs;
    this.#log = core.opts.logger.child({ smpp: this.name });
    this.#deliver = new DeliverHandler(this.name, core, this.#log, (session, pdu, status) =>
      this.#answer(session, pdu, status),
    );
  }

  get outstanding(): number {
    return this.#inFlight.size;
  }

  #setState(state: LinkState, reason?: string): void {
    if (this.state === state) return;
    this.state = state;
    this.#log.info({ state, reason }, 'smpp link state');
    this.core.emit({ type: 'smpp.linkState', connection: this.name, state, ...(reason ? { reason } : {}) });
  }

  start(): void {
    if (this.core.closed) return;
    this.#setState('connecting');
    let session: Session;
    try {
      session = smpp.connect({ host: this.cfg.host, port: this.cfg.port, tls: this.cfg.tls });
    } catch (err) {
      this.#lost(null, `connect failed: ${String(err)}`);
      return;
    }
    this.#session = session;
    // Nagle + delayed ACK held back small submit_sm writes by ~40 ms (measured): disable it.
    session.socket.setNoDelay(true);
    const connectTimer = setTimeout(() => this.#lost(session, 'connect timeout'), this.cfg.responseTimeoutMs);
    session.on('error', (err: Error) => this.#lost(session, `socket error: ${err.message}`));
    session.on('close', () => this.#lost(session, 'connection closed'));
    session.on('connect', () => {
      clearTimeout(connectTimer);
      this.#bind(session);
    });
    session.on('pdu', (pdu: PDU) => {
      try {
        this.#onPdu(session, pdu);
      } catch (err) {
        // This PDU ends here, answered; the bind and the process go on.
        this.#log.error({ err, command: pdu.command }, 'smpp inbound pdu handling failed');
        if (!pdu.isResponse() && !this.#answered.has(pdu))
          this.#answer(session, pdu, CommandStatus.ESME_RSYSERR);
      }
    });
  }

  #bind(session: Session): void {
    const fields = {
      system_id: this.cfg.systemId,
      password: this.cfg.password,
      system_type: this.cfg.systemType,
      interface_version: 0x34,
    };
    const timer = setTimeout(() => this.#lost(session, 'bind response timeout'), this.cfg.responseTimeoutMs);
    const cb = (resp: PDU): void => {
      clearTimeout(timer);
      if (session !== this.#session) return;
      if (resp.command_status !== CommandStatus.ESME_ROK) {
        this.#lost(session, `bind refused 0x${resp.command_status.toString(16)}`);
        return;
      }
      this.#backoffMs = this.cfg.reconnectMinMs;
      this.#setState('bound');
      this.#scheduleEnquire(session);
      this.pump();
    };
    const method =
      this.cfg.bind === 'transmitter'
        ? 'bind_transmitter'
        : this.cfg.bind === 'receiver'
          ? 'bind_receiver'
          : 'bind_transceiver';
    session[method](fields, this.#guarded('bind_resp', cb));
  }

  #scheduleEnquire(session: Session): void {
    if (this.#enquireTimer) clearTimeout(this.#enquireTimer);
    this.#enquireTimer = setTimeout(() => {
      if (session !== this.#session || this.state !== 'bound') return;
      const timer = setTimeout(
        () => this.#lost(session, 'enquire_link response timeout'),
        this.cfg.responseTimeoutMs,
      );
      const sent = session.enquire_link(
        {},
        this.#guarded('enquire_link_resp', () => {
          clearTimeout(timer);
          if (session !== this.#session) return;
          this.#scheduleEnquire(session);
        }),
      );
      if (!sent) {
        clearTimeout(timer);
        this.#lost(session, 'socket not writable');
      }
    }, this.cfg.enquireLinkMs);
  }

  /** The bind is dead: re-queue in-flight jobs (flagged duplicate), reconnect with backoff. */
  #lost(session: Session | null, reason: string): void {
    if (session !== null && session !== this.#session) return;
    const s = this.#session;
    this.#session = null;
    if (this.#enquireTimer) clearTimeout(this.#enquireTimer);
    if (this.#pumpTimer) clearTimeout(this.#pumpTimer);
    this.#enquireTimer = null;
    this.#pumpTimer = null;
    if (s) {
      // What this turn wrote (an unbind_resp, say) goes out before the socket is destroyed.
      if (this.#corked === s) {
        this.#corked = null;
        s.socket.uncork();
      }
      s.removeAllListeners('close');
      s.removeAllListeners('pdu');
      s.on('error', () => {});
      s.destroy();
    }
    const jobs = [...this.#inFlight.values()];
    this.#inFlight.clear();
    for (const { job, timer } of jobs) {
      clearTimeout(timer);
      job.duplicate = true;
    }
    // back at the head of the queue, in original order
    this.core.queue.unshift(jobs.map((j) => j.job));
    if (this.core.closed) {
      this.#setState('closed', reason);
      return;
    }
    this.#setState('disconnected', reason);
    const delay = this.#backoffMs;
    this.#backoffMs = Math.min(this.cfg.reconnectMaxMs, this.#backoffMs * 2);
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null;
      this.start();
    }, delay);
    if (jobs.length > 0) this.core.pumpAll();
  }

  /** Send queued jobs while the window has room. */
  pump(): void {
    const session = this.#session;
    if (!session || this.core.closed || this.state !== 'bound' || this.cfg.bind === 'receiver') return;
    const next = this.core.releaseDue(Date.now());
    while (this.#inFlight.size + this.#opening < this.cfg.window && this.core.queue.length > 0) {
      const job = this.core.queue.shift();
      if (!job) break;
      if (job.gate && !job.gate.done) {
        this.#openThenSend(session, job, job.gate);
        continue;
      }
      this.#send(session, job);
      if (session !== this.#session) return;
    }
    if (next !== null && !this.#pumpTimer) {
      this.#pumpTimer = setTimeout(
        () => {
          this.#pumpTimer = null;
          this.pump();
        },
        Math.max(1, next - Date.now()),
      );
    }
  }

  /** Holds a window slot while `beforeSend` runs, then sends (or re-queues if the bind was lost). */
  #openThenSend(session: Session, job: SegmentJob, gate: SendGate): void {
    this.#opening++;
    gate.open().then(
      () => {
        this.#opening--;
        if (this.core.closed) job.reject(new SmppError(CommandStatus.LOCAL_CLOSED, 'link closed'));
        else if (session === this.#session && this.state === 'bound') this.#send(session, job);
        else this.core.queue.unshift([job]);
        this.core.pumpAll();
      },
      (err: unknown) => {
        this.#opening--;
        this.#log.error({ err }, 'smpp submit not started: beforeSend failed');
        job.reject(new SmppError(CommandStatus.ESME_RSYSERR, 'the submit could not be recorded'));
        this.core.pumpAll();
      },
    );
  }

  #send(session: Session, job: SegmentJob): void {
    let pdu: PDU;
    try {
      pdu = new smpp.PDU('submit_sm', {
        source_addr_ton: this.cfg.sourceTon,
        source_addr_npi: this.cfg.sourceNpi,
        dest_addr_ton: this.cfg.destTon,
        dest_addr_npi: this.cfg.destNpi,
        registered_delivery: job.registeredDelivery ?? this.cfg.registeredDelivery,
        ...job.fields,
      });
    } catch (err) {
      job.reject(new SmppError(CommandStatus.ESME_RSYSERR, `cannot build submit_sm: ${String(err)}`));
      return;
    }
    this.#batchWrites(session);
    const sent = session.send(
      pdu,
      this.#guarded('submit_sm_resp', (resp) => this.#onSubmitResp(session, pdu.sequence_number, resp)),
    );
    if (!sent) {
      this.core.queue.unshift([job]);
      this.#lost(session, 'socket not writable');
      return;
    }
    const seq = pdu.sequence_number;
    const timer = setTimeout(
      () => this.#lost(session, 'submit_sm response timeout'),
      this.cfg.responseTimeoutMs,
    );
    this.#inFlight.set(seq, { job, timer });
    if (this.#inFlight.size > this.maxOutstanding) this.maxOutstanding = this.#inFlight.size;
  }

  #onSubmitResp(session: Session, seq: number, resp: PDU): void {
    if (session !== this.#session) return;
    const entry = this.#inFlight.get(seq);
    if (!entry) return;
    this.#inFlight.delete(seq);
    clearTimeout(entry.timer);
    const { job } = entry;
    // a generic_nack answering our submit_sm is a failure even if its status were 0
    const status =
      resp.command === 'generic_nack'
        ? resp.command_status || CommandStatus.ESME_RSYSERR
        : resp.command_status;
    if (status === CommandStatus.ESME_ROK) {
      const id = resp.message_id ?? '';
      this.core.noteSubmitted(id);
      job.resolve(id);
    } else if (isRetryableStatus(status)) {
      const delay = this.core.retryLater(job);
      this.#log.debug({ status, delay, attempt: job.throttled }, 'smpp submit throttled, retrying');
    } else {
      job.reject(new SmppError(status));
    }
    if (this.#inFlight.size === 0 && this.#drained) this.#drained();
    this.core.pumpAll();
  }

  /**
   * A response callback that never throws into the library: `smpp` runs callbacks inside its PDU
   * reader, and a throw there leaves the reader busy for good (the bind would hang, unanswered).
   */
  #guarded(what: string, fn: (pdu: PDU) => void): (pdu: PDU) => void {
    return (pdu) => {
      try {
        fn(pdu);
      } catch (err) {
        this.#log.error({ err, what }, 'smpp response handling failed');
      }
    };
  }

  /**
   * Coalesces the writes of this turn of the event loop into one: the socket is corked at the first
   * and uncorked once the callbacks running now are done (one syscall for a group-committed batch of
   * submit_sm, or for the answers to one read of receipts, instead of one per PDU).
   */
  #batchWrites(session: Session): void {
    if (this.#corked === session) return;
    this.#corked = session;
    session.socket.cork();
    process.nextTick(() => {
      if (this.#corked === session) this.#corked = null;
      session.socket.uncork();
    });
  }

  /** Answers an inbound request once; a session that is gone meanwhile is not an error. */
  #answer(session: Session, pdu: PDU, status: number): void {
    if (this.#answered.has(pdu)) return;
    this.#answered.add(pdu);
    this.#batchWrites(session);
    try {
      session.send(pdu.response(status === CommandStatus.ESME_ROK ? undefined : { command_status: status }));
    } catch (err) {
      this.#log.warn({ err, command: pdu.command }, 'smpp response not sent');
    }
  }

  #onPdu(session: Session, pdu: PDU): void {
    if (session !== this.#session) return;
    switch (pdu.command) {
      case 'enquire_link':
        this.#answer(session, pdu, CommandStatus.ESME_ROK);
        return;
      case 'unbind':
        this.#answer(session, pdu, CommandStatus.ESME_ROK);
        this.#lost(session, 'unbind from SMSC');
        return;
      case 'deliver_sm':
      case 'data_sm':
        this.#deliver.take(session, pdu);
        return;
      case 'unknown':
        this.#answer(session, pdu, CommandStatus.ESME_ROK);
        return;
      case 'generic_nack':
        this.#log.warn(
          { seq: pdu.sequence_number, status: pdu.command_status },
          'smpp generic_nack received',
        );
        return;
      default:
        if (!pdu.isResponse()) this.#answer(session, pdu, CommandStatus.ESME_RINVCMDID);
    }
  }
  /**
   * Graceful (SMPP v3.4 §4.2: no unbind with operations outstanding): stop sending, wait for the
   * outstanding submit_sm_resp (bounded by response_timeout), unbind, wait for unbind_resp
   * (bounded), close.
   */
  async close(): Promise<void> {
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = null;
    const session = this.#session;
    if (!session) {
      this.#setState('closed');
      return;
    }
    if (this.state === 'bound' && this.#inFlight.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.cfg.responseTimeoutMs);
        this.#drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#drained = null;
    }
    if (this.state === 'bound' && session === this.#session) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.core.opts.unbindTimeoutMs);
        const ok = session.unbind({}, () => {
          clearTimeout(timer);
          resolve();
        });
        if (!ok) {
          clearTimeout(timer);
          resolve();
        }
      });
    }
    this.#lost(session, 'shutdown');
  }
}
