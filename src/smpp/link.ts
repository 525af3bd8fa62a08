/**
 * SMPP adapter implementing the CarrierLink port on npm `smpp` 0.5.1 (SMPP v3.4).
 *
 * The library has no reconnect, window, throttling or response timeouts (field-notes §4); this
 * adapter adds them. One `SmppConnection` (connection.ts) per SMPP_URL entry keeps a persistent bind;
 * all connections pull segment jobs from one shared queue (link-core.ts), each keeping up to its
 * window of submit_sm outstanding; deliver_sm (receipts, MO) are taken in deliver.ts.
 */

import { SmppConnection } from './connection.js';
import { encodeMessage } from './encoding.js';
import { CommandStatus, SmppError } from './errors.js';
import { LinkCore, type SegmentJob, SendGate, type SmppLinkOptions } from './link-core.js';
import type { CarrierLink, LinkState, MoHandler, OutboundSms, SmppEvent, SubmitResult } from './port.js';
import { SmppLimits, SmppTimers } from './timers.js';
import type { SmppConnectionConfig } from './url.js';

export type { SmppLinkOptions } from './link-core.js';

const ESM_UDHI = 0x40;

/** Factory: one link over one or more SMSC connections (SMPP_URL entries). */
export class SmppCarrierLink implements CarrierLink {
  readonly #core: LinkCore;
  readonly #connections: SmppConnection[] = [];
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
    for (const cfg of configs) {
      const c = new SmppConnection(cfg, this.#core);
      this.#connections.push(c);
      this.#core.connections.push(c);
    }
    this.#sweep = setInterval(() => this.#core.sweepParked(Date.now()), 1000);
    this.#sweep.unref();
  }

  /** Open every connection (bind in the background; state changes come as events). */
  start(): void {
    for (const c of this.#connections) if (c.state === 'disconnected') c.start();
  }

  get bound(): boolean {
    return this.#connections.some((c) => c.state === 'bound');
  }

  /** Per-connection state and window figures (health, tests, benchmarks). */
  stats(): { name: string; state: LinkState; outstanding: number; maxOutstanding: number }[] {
    return this.#connections.map((c) => ({
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
      this.#closing = Promise.all(this.#connections.map((c) => c.close())).then(() => {
        const left = [...this.#core.queue.drain(), ...this.#core.delayed.splice(0)];
        for (const job of left) job.reject(new SmppError(CommandStatus.LOCAL_CLOSED, 'link closed'));
      });
    }
    return this.#closing;
  }
}
