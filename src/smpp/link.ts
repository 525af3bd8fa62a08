/**
 * SMPP adapter implementing the CarrierLink port on npm `smpp` 0.5.1 (SMPP v3.4).
 *
 * The library has no reconnect, window, throttling or response timeouts (field-notes §4), so this
 * file adds them: one `SmppConnection` per SMPP_URL entry keeps a persistent bind (states
 * connecting → bound → disconnected → connecting ..., closed at the end) with enquire_link and
 * capped exponential reconnect; all connections pull segment jobs from one shared queue, each never
 * exceeding its window of outstanding submit_sm.
 */
import smpp, { type PDU, type Session } from 'smpp';
import type { Logger } from '../logger.js';
import { concatFromUdh, decodePayload, encodeMessage, splitUdh } from './encoding.js';
import { CommandStatus, isRetryableStatus, MessageStateStat, mapReceiptStat, SmppError } from './errors.js';
import type {
  CarrierLink,
  LinkState,
  MoHandler,
  OutboundSms,
  SmppDeliverSmEvent,
  SmppEvent,
  SubmitResult,
} from './port.js';
import { ReassemblyBuffer } from './reassembly.js';
import { normaliseMessageId, parseReceiptText } from './receipt.js';
import { SmppLimits, SmppTimers } from './timers.js';
import type { SmppConnectionConfig } from './url.js';

const ESM_UDHI = 0x40;
const ESM_RECEIPT_MASK = 0x3c;

/** Tunables beyond SMPP_URL (tests shorten them). */
export interface SmppLinkOptions {
  readonly logger: Logger;
  readonly throttleMinMs?: number;
  readonly throttleMaxMs?: number;
  readonly reassemblyTimeoutMs?: number;
  readonly reassemblyMaxEntries?: number;
  readonly earlyReceiptTtlMs?: number;
  readonly earlyReceiptMax?: number;
  readonly unbindTimeoutMs?: number;
}

interface SegmentJob {
  /** submit_sm fields except TON/NPI and default registered_delivery, which each bind fills in. */
  readonly fields: Record<string, unknown>;
  readonly registeredDelivery: number | undefined;
  throttled: number;
  notBefore: number;
  /** Sent at least once on a bind that was lost before the resp came back. */
  duplicate: boolean;
  /** The message's `beforeSend`, shared by its segments: runs once, awaited before the first write. */
  readonly gate: SendGate | null;
  resolve(id: string): void;
  reject(err: SmppError): void;
}

/** Runs a message's `beforeSend` once; every segment waits for the same run. */
class SendGate {
  #run: Promise<void> | null = null;
  #done = false;
  constructor(private readonly hook: () => Promise<void>) {}
  get done(): boolean {
    return this.#done;
  }
  open(): Promise<void> {
    this.#run ??= Promise.resolve()
      .then(this.hook)
      .then(() => {
        this.#done = true;
      });
    return this.#run;
  }
}

/** Bounded insertion-ordered set/map helper. */
class BoundedMap<V> extends Map<string, V> {
  constructor(readonly max: number) {
    super();
  }
  override set(key: string, value: V): this {
    if (!this.has(key) && this.size >= this.max) {
      const first = this.keys().next();
      if (!first.done) this.delete(first.value);
    }
    return super.set(key, value);
  }
}

/** Shared state of the link: the queue and receipt matching, used by every connection. */
class LinkCore {
  /** Segments ready to send, FIFO (re-queued in-flight segments go back to the head). */
  readonly queue: SegmentJob[] = [];
  /** Throttled segments, sorted by notBefore; moved back to the head of `queue` when due. */
  readonly delayed: SegmentJob[] = [];
  readonly listeners = new Set<(e: SmppEvent) => void>();
  /** normalised message id → raw id, for ids seen in submit_sm_resp. */
  readonly submitted = new BoundedMap<string>(200_000);
  /** receipts received before their submit_sm_resp. */
  readonly parked = new BoundedMap<{ at: number; emit: (matched: boolean, rawId: string) => void }>(
    SmppLimits.EARLY_RECEIPT_MAX,
  );
  readonly seenReceipts = new BoundedMap<true>(200_000);
  readonly connections: SmppConnection[] = [];
  moHandler: MoHandler | null = null;
  closed = false;
  ref = Math.floor(Math.random() * 256);

  constructor(readonly opts: Required<Omit<SmppLinkOptions, 'logger'>> & { logger: Logger }) {
    this.parked = new BoundedMap(opts.earlyReceiptMax);
  }

  emit(e: SmppEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        this.opts.logger.error({ err, event: e.type }, 'smpp listener threw');
      }
    }
  }

  /** Park a throttled segment until `job.notBefore` (binary insertion keeps `delayed` sorted). */
  delay(job: SegmentJob): void {
    let lo = 0;
    let hi = this.delayed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.delayed[mid]?.notBefore ?? 0) <= job.notBefore) lo = mid + 1;
      else hi = mid;
    }
    this.delayed.splice(lo, 0, job);
  }

  /** Move due throttled segments to the head of the ready queue; returns the next due time or null. */
  releaseDue(now: number): number | null {
    let n = 0;
    while (n < this.delayed.length && (this.delayed[n]?.notBefore ?? 0) <= now) n++;
    if (n > 0) this.queue.unshift(...this.delayed.splice(0, n));
    return this.delayed[0]?.notBefore ?? null;
  }

  pumpAll(): void {
    for (const c of this.connections) c.pump();
  }

  /** A submit_sm_resp gave us an id: remember it and release a parked receipt. */
  noteSubmitted(rawId: string): void {
    const key = normaliseMessageId(rawId);
    this.submitted.set(key, rawId);
    const p = this.parked.get(key);
    if (p) {
      this.parked.delete(key);
      p.emit(true, rawId);
    }
  }

  sweepParked(now: number): void {
    for (const [key, p] of this.parked) {
      if (p.at + this.opts.earlyReceiptTtlMs > now) break;
      this.parked.delete(key);
      p.emit(false, key);
    }
  }
}

/** One SMSC bind. */
class SmppConnection {
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
  readonly #reassembly: ReassemblyBuffer;
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
    this.#reassembly = new ReassemblyBuffer({
      timeoutMs: core.opts.reassemblyTimeoutMs,
      maxEntries: core.opts.reassemblyMaxEntries,
      onExpired: (key, received, total) =>
        this.#log.warn({ key, received, total, errorCode: 30009 }, 'smpp segments expired before reassembly'),
    });
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
    this.core.queue.unshift(...jobs.map((j) => j.job));
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
        else this.core.queue.unshift(job);
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
    const sent = session.send(
      pdu,
      this.#guarded('submit_sm_resp', (resp) => this.#onSubmitResp(session, pdu.sequence_number, resp)),
    );
    if (!sent) {
      this.core.queue.unshift(job);
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
      job.throttled++;
      const delay = Math.min(
        this.core.opts.throttleMaxMs,
        this.core.opts.throttleMinMs * 2 ** Math.min(20, job.throttled - 1),
      );
      job.notBefore = Date.now() + delay;
      this.core.delay(job);
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

  /** Answers an inbound request once; a session that is gone meanwhile is not an error. */
  #answer(session: Session, pdu: PDU, status: number): void {
    if (this.#answered.has(pdu)) return;
    this.#answered.add(pdu);
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
        this.#onDeliver(session, pdu);
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

  #onDeliver(session: Session, pdu: PDU): void {
    const { ies, text } = this.#rawMessage(pdu);
    const isReceipt =
      ((pdu.esm_class ?? 0) & ESM_RECEIPT_MASK) !== 0 || pdu.receipted_message_id !== undefined;
    if (isReceipt) {
      // Receipts are idempotent on our side (matched by id): acknowledged first, then matched.
      this.#answer(session, pdu, CommandStatus.ESME_ROK);
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
      this.#answer(session, pdu, CommandStatus.ESME_ROK);
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
      this.#answer(session, pdu, CommandStatus.ESME_ROK);
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
        () => this.#answer(session, pdu, CommandStatus.ESME_ROK),
        (err: unknown) => {
          const status =
            err instanceof SmppError && err.commandStatus > 0
              ? err.commandStatus
              : CommandStatus.ESME_RX_T_APPN;
          if (status === CommandStatus.ESME_RX_T_APPN) undo();
          this.#log.warn({ err, status, from: event.from, to: event.to }, 'smpp MO refused');
          this.#answer(session, pdu, status);
        },
      )
      .catch((err: unknown) => this.#log.error({ err }, 'smpp MO answer failed'));
  }

  #onReceipt(pdu: PDU, text: string): void {
    const parsed = parseReceiptText(text);
    const rawId = pdu.receipted_message_id ?? parsed?.id;
    const stat =
      parsed?.stat ??
      (pdu.message_state !== undefined ? MessageStateStat[pdu.message_state] : undefined) ??
      'UNKNOWN';
    if (!rawId) {
      this.#log.warn({ text }, 'smpp receipt without message id ignored');
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

/** Factory: one link over one or more SMSC connections (SMPP_URL entries). */
export class SmppCarrierLink implements CarrierLink {
  readonly #core: LinkCore;
  readonly #cfgs: readonly SmppConnectionConfig[];
  #closing: Promise<void> | null = null;
  #sweep: NodeJS.Timeout;

  constructor(configs: readonly SmppConnectionConfig[], options: SmppLinkOptions) {
    this.#cfgs = configs;
    this.#core = new LinkCore({
      logger: options.logger,
      throttleMinMs: options.throttleMinMs ?? SmppTimers.THROTTLE_MIN_MS,
      throttleMaxMs: options.throttleMaxMs ?? SmppTimers.THROTTLE_MAX_MS,
      reassemblyTimeoutMs: options.reassemblyTimeoutMs ?? SmppTimers.REASSEMBLY_TIMEOUT_MS,
      reassemblyMaxEntries: options.reassemblyMaxEntries ?? SmppLimits.REASSEMBLY_MAX_ENTRIES,
      earlyReceiptTtlMs: options.earlyReceiptTtlMs ?? SmppTimers.EARLY_RECEIPT_TTL_MS,
      earlyReceiptMax: options.earlyReceiptMax ?? SmppLimits.EARLY_RECEIPT_MAX,
      unbindTimeoutMs: options.unbindTimeoutMs ?? SmppTimers.UNBIND_TIMEOUT_MS,
    });
    for (const cfg of configs) this.#core.connections.push(new SmppConnection(cfg, this.#core));
    this.#sweep = setInterval(() => this.#core.sweepParked(Date.now()), 1000);
    this.#sweep.unref();
  }

  /** Open every connection (bind in the background; state changes come as events). */
  start(): void {
    for (const c of this.#core.connections) if (c.state === 'disconnected') c.start();
  }

  get bound(): boolean {
    return this.#core.connections.some((c) => c.state === 'bound');
  }

  /** Per-connection state and window figures (health, tests, benchmarks). */
  stats(): { name: string; state: LinkState; outstanding: number; maxOutstanding: number }[] {
    return this.#core.connections.map((c) => ({
      name: c.name,
      state: c.state,
      outstanding: c.outstanding,
      maxOutstanding: c.maxOutstanding,
    }));
  }

  get queued(): number {
    return this.#core.queue.length + this.#core.delayed.length;
  }

  handleMo(handler: MoHandler | null): void {
    this.#core.moHandler = handler;
  }

  subscribe(listener: (event: SmppEvent) => void): () => void {
    this.#core.listeners.add(listener);
    return () => this.#core.listeners.delete(listener);
  }

  submit(message: OutboundSms): Promise<SubmitResult> {
    try {
      if (this.#core.closed) return Promise.reject(new SmppError(CommandStatus.LOCAL_CLOSED, 'link closed'));
      const cfg = this.#cfgs[0];
      if (!cfg) return Promise.reject(new SmppError(CommandStatus.LOCAL_CLOSED, 'no SMSC configured'));
      this.#core.ref = (this.#core.ref + 1) & 0xff;
      const encoded = encodeMessage(message.body, cfg.dataCoding, this.#core.ref);
      let duplicate = false;
      const gate = message.beforeSend ? new SendGate(message.beforeSend) : null;
      const registered =
        message.registeredDelivery === undefined
          ? cfg.registeredDelivery
          : message.registeredDelivery
            ? 1
            : 0;
      const parts = encoded.segments.map(
        (seg) =>
          new Promise<string>((resolve, reject) => {
            const fields: Record<string, unknown> = {
              service_type: '',
              source_addr: message.from,
              destination_addr: message.to,
              esm_class: seg.udh ? ESM_UDHI : 0,
              data_coding: encoded.dataCoding,
              short_message: seg.shortMessage,
            };
            if (message.destinationNetworkId !== undefined)
              fields.dest_network_id = message.destinationNetworkId;
            const job: SegmentJob = {
              fields,
              registeredDelivery: registered,
              throttled: 0,
              notBefore: 0,
              duplicate: false,
              gate,
              resolve: (id) => {
                if (job.duplicate) duplicate = true;
                resolve(id);
              },
              reject,
            };
            this.#core.queue.push(job);
          }),
      );
      this.#core.pumpAll();
      return Promise.all(parts).then((messageIds) => ({
        messageIds,
        segments: messageIds.length,
        dataCoding: encoded.dataCoding,
        possibleDuplicate: duplicate,
      }));
    } catch (err) {
      return Promise.reject(
        err instanceof SmppError
          ? err
          : new SmppError(CommandStatus.ESME_RSYSERR, `submit failed: ${String(err)}`),
      );
    }
  }

  /** Idempotent: unbind every connection, reject what is still queued. */
  close(): Promise<void> {
    if (!this.#closing) {
      this.#core.closed = true;
      clearInterval(this.#sweep);
      this.#closing = Promise.all(this.#core.connections.map((c) => c.close())).then(() => {
        const left = [...this.#core.queue.splice(0), ...this.#core.delayed.splice(0)];
        for (const job of left) job.reject(new SmppError(CommandStatus.LOCAL_CLOSED, 'link closed'));
      });
    }
    return this.#closing;
  }
}
