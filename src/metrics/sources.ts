/**
 * Scrape-time series: figures that other parts already keep, read when Prometheus scrapes rather
 * than fed twice. Each source is optional (no SIP, no SMPP link...) and a source that fails or is
 * slow leaves its series at the last value instead of failing or stalling the whole scrape.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

/** What the SMS service counts since start. */
export interface SmsFigures {
  /** Inbound messages by where they went: `app`, `client`, `proxy_out`, `not_found`. */
  readonly inbound: Readonly<Record<string, number>>;
  /** Outbound messages accepted for sending. */
  readonly outbound: number;
  /** Outbound messages that reached each status (`sent`, `delivered`, `undelivered`, `failed`). */
  readonly outcomes: Readonly<Record<string, number>>;
}

/** One SMPP connection as the link reports it. */
export interface SmppLinkFigures {
  readonly name: string;
  readonly state: string;
  /** submit_sm awaiting their response (the window in use). */
  readonly outstanding: number;
}

/** The media engine's load over the window since the previous reading. */
export interface MediaLoadFigures {
  readonly tickLateP50Ms: number;
  readonly tickLateP99Ms: number;
  readonly tickLateMaxMs: number;
  /** Engine process CPU, percent of one core. */
  readonly cpuPercent: number;
  readonly restarts: number;
}

export interface MetricSources {
  /** SIP registrations live in the cluster (the registrar's count). */
  readonly registeredEndpoints?: () => Promise<number>;
  readonly sms?: () => SmsFigures;
  /** Endpoints the media engine holds on this node. */
  readonly mediaEndpoints?: () => number;
  /**
   * The engine's load since the previous call (so the window is the scrape interval), or null while
   * the engine is down (nothing is reported then rather than zeros).
   */
  readonly mediaLoad?: () => Promise<MediaLoadFigures | null>;
  readonly smppLinks?: () => readonly SmppLinkFigures[];
}

/** A scrape waits this long for an asynchronous source (Redis) before keeping its last value. */
const ASYNC_SOURCE_TIMEOUT_MS = 1_000;

/** States a link can report; each gets a 0/1 series so a dashboard can alert on `bound == 0`. */
const SMPP_STATES = ['connecting', 'bound', 'disconnected', 'closed'] as const;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('metric source timed out')), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** Sets a counter to a total kept elsewhere (totals only grow; a restart starts both at zero). */
function setCounter<T extends string>(c: Counter<T>, labels: Partial<Record<T, string>>, value: number) {
  c.reset();
  c.inc(labels, value);
}

export function observeSources(registry: Registry, s: MetricSources): void {
  const registeredEndpoints = s.registeredEndpoints;
  if (registeredEndpoints) {
    new Gauge({
      name: 'switchboard_sip_registered_endpoints',
      help: 'SIP contacts registered in the cluster (the registrar count)',
      registers: [registry],
      async collect() {
        try {
          this.set(await withTimeout(registeredEndpoints(), ASYNC_SOURCE_TIMEOUT_MS));
        } catch {
          // Redis unreachable or slow: keep the last value; /ready reports the outage.
        }
      },
    });
  }
  const sms = s.sms;
  if (sms) {
    new Counter({
      name: 'switchboard_sms_inbound_total',
      help: 'Inbound SMS by where they were routed',
      labelNames: ['route'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [route, n] of Object.entries(sms().inbound)) this.inc({ route }, n);
      },
    });
    new Counter({
      name: 'switchboard_sms_outbound_total',
      help: 'Outbound SMS accepted for sending',
      registers: [registry],
      collect() {
        setCounter(this, {}, sms().outbound);
      },
    });
    new Counter({
      name: 'switchboard_sms_status_total',
      help: 'Outbound SMS that reached a status: sent (submitted), delivered, undelivered, failed',
      labelNames: ['status'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [status, n] of Object.entries(sms().outcomes)) this.inc({ status }, n);
      },
    });
  }
  const mediaEndpoints = s.mediaEndpoints;
  if (mediaEndpoints) {
    new Gauge({
      name: 'switchboard_media_endpoints',
      help: 'Media endpoints held by this node’s media engine',
      registers: [registry],
      collect() {
        this.set(mediaEndpoints());
      },
    });
  }
  const mediaLoad = s.mediaLoad;
  if (mediaLoad) observeMediaLoad(registry, mediaLoad);
  const smppLinks = s.smppLinks;
  if (smppLinks) {
    new Gauge({
      name: 'switchboard_smpp_link_state',
      help: 'SMPP connections by configured link and state (1 for the current state)',
      labelNames: ['link', 'state'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const l of smppLinks())
          for (const state of SMPP_STATES) this.set({ link: l.name, state }, l.state === state ? 1 : 0);
      },
    });
    new Gauge({
      name: 'switchboard_smpp_window_outstanding',
      help: 'submit_sm awaiting their response, per SMPP link',
      labelNames: ['link'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const l of smppLinks()) this.set({ link: l.name }, l.outstanding);
      },
    });
  }
}

/**
 * One engine query per scrape feeds three series: the first to collect asks, the others of the same
 * scrape reuse its answer (it is dropped on the next turn of the event loop). `load()` measures since
 * its previous call, so this must be its only regular caller on a running server.
 */
function observeMediaLoad(registry: Registry, read: () => Promise<MediaLoadFigures | null>): void {
  let pending: Promise<MediaLoadFigures | null> | null = null;
  const reading = () => {
    pending ??= withTimeout(read(), ASYNC_SOURCE_TIMEOUT_MS)
      .catch(() => null)
      .finally(() =>
        setImmediate(() => {
          pending = null;
        }),
      );
    return pending;
  };
  new Gauge({
    name: 'switchboard_media_tick_late_seconds',
    help: 'Media engine 20 ms tick lateness over the last scrape interval, by quantile (1 = max)',
    labelNames: ['quantile'] as const,
    registers: [registry],
    async collect() {
      const l = await reading();
      if (!l) return;
      this.set({ quantile: '0.5' }, l.tickLateP50Ms / 1000);
      this.set({ quantile: '0.99' }, l.tickLateP99Ms / 1000);
      this.set({ quantile: '1' }, l.tickLateMaxMs / 1000);
    },
  });
  new Gauge({
    name: 'switchboard_media_engine_cpu_ratio',
    help: 'Media engine process CPU over the last scrape interval (1 = one core)',
    registers: [registry],
    async collect() {
      const l = await reading();
      if (l) this.set(l.cpuPercent / 100);
    },
  });
  new Counter({
    name: 'switchboard_media_engine_restarts_total',
    help: 'Media engine process restarts after it died',
    registers: [registry],
    async collect() {
      const l = await reading();
      if (l) setCounter(this, {}, l.restarts);
    },
  });
}
