/**
 * Gateway registration actor (spec §Gateway: "the service acts as the SIP client and registers
 * itself to the gateway"). One root actor per Gateway with Register=true.
 *
 *   registering ──ok──▶ registered ──REFRESH (80 % of the granted expiry)──▶ registering
 *        │                   │
 *        └──failure──▶ retrying ──RETRY (1 s doubling, capped at 60 s)──▶ registering
 *   any ──gateway.updated──▶ registering (new settings, counters reset)
 *   any ──gateway.removed──▶ unregistering (Expires: 0, once) ──▶ removed (final)
 *
 * Context is plain data: the REGISTER dialog's Call-ID and next CSeq (RFC 3261 §10.2.4: refreshes
 * keep the Call-ID and raise the CSeq) and absolute deadlines, so a restored snapshot re-arms its
 * timer from `refreshAt`/`retryAt`. The password never enters the context: the `register` actor
 * gets it from the adapter by gateway sid.
 */
import { assign, fromPromise, setup } from 'xstate';
import { GatewayTimers } from './timers.js';

/** What one REGISTER transaction (with its digest retry) came to. */
export interface RegisterOutcome {
  /** Final SIP status; 0 when no response came (timeout or transport error). */
  readonly status: number;
  readonly reason: string;
  /** Expiry granted by the registrar, seconds (Contact `expires`, else `Expires`, else requested). */
  readonly expires: number;
  /** The CSeq the next REGISTER must use. */
  readonly nextCseq: number;
}

export interface RegisterInput {
  readonly gatewaySid: string;
  readonly callId: string;
  readonly cseq: number;
  /** Requested expiry, seconds; 0 unregisters. */
  readonly expires: number;
}

export interface GatewayRegistrationContext {
  readonly gatewaySid: string;
  /** Requested registration time to live, seconds (Gateway TTL). */
  readonly ttl: number;
  readonly callId: string;
  readonly cseq: number;
  /** Consecutive failures (drives the backoff). */
  readonly failures: number;
  readonly lastStatus: number | null;
  readonly lastReason: string | null;
  /** When the current binding at the gateway ends (epoch ms). */
  readonly expiresAt: number | null;
  readonly refreshAt: number | null;
  readonly retryAt: number | null;
}

export interface GatewayRegistrationInput {
  readonly gatewaySid: string;
  readonly ttl: number;
  readonly callId: string;
}

export type GatewayRegistrationEvent =
  | { readonly type: 'gateway.updated'; readonly ttl: number }
  | { readonly type: 'gateway.removed' }
  | { readonly type: 'gateway.restored' };

/** Wire values of the registration state shown on the Gateway resource. */
export const RegistrationState = {
  Registering: 'registering',
  Registered: 'registered',
  Retrying: 'retrying',
  Unregistering: 'unregistering',
  Removed: 'removed',
} as const;
export type RegistrationState = (typeof RegistrationState)[keyof typeof RegistrationState];

/** Delay before retry number `failures` (1-based): 1 s, 2 s, 4 s … capped. */
export function retryDelay(failures: number): number {
  return Math.min(GatewayTimers.RETRY_MIN_MS * 2 ** Math.max(0, failures - 1), GatewayTimers.RETRY_MAX_MS);
}

const isSuccess = (o: RegisterOutcome) => o.status >= 200 && o.status < 300;

export const gatewayRegistrationMachine = setup({
  types: {
    context: {} as GatewayRegistrationContext,
    events: {} as GatewayRegistrationEvent,
    input: {} as GatewayRegistrationInput,
    tags: {} as RegistrationState,
  },
  actors: {
    /** Sends one REGISTER (answering a digest challenge once); provided by the adapter. */
    register: fromPromise<RegisterOutcome, RegisterInput>(async () => {
      throw new Error('register actor not provided');
    }),
  },
  guards: {
    succeeded: (_, outcome: RegisterOutcome) => isSuccess(outcome),
  },
  delays: {
    REFRESH: ({ context }) => Math.max(0, (context.refreshAt ?? Date.now()) - Date.now()),
    RETRY: ({ context }) => Math.max(0, (context.retryAt ?? Date.now()) - Date.now()),
  },
  actions: {
    recordSuccess: assign((_, o: RegisterOutcome) => {
      const now = Date.now();
      const expires = Math.max(1, o.expires);
      return {
        cseq: o.nextCseq,
        failures: 0,
        lastStatus: o.status,
        lastReason: o.reason,
        expiresAt: now + expires * 1000,
        refreshAt: now + Math.floor(expires * 1000 * GatewayTimers.REFRESH_RATIO),
        retryAt: null,
      };
    }),
    /** A final failure status, or (no outcome) an error thrown by the register actor. */
    recordFailure: assign(({ context }, o: { outcome?: RegisterOutcome; error?: unknown }) => {
      const failures = context.failures + 1;
      return {
        cseq: o.outcome?.nextCseq ?? context.cseq + 2,
        failures,
        lastStatus: o.outcome?.status ?? 0,
        lastReason: o.outcome?.reason ?? String(o.error ?? 'error'),
        retryAt: Date.now() + retryDelay(failures),
        refreshAt: null,
      };
    }),
    applySettings: assign(({ event }) =>
      event.type === 'gateway.updated' ? { ttl: event.ttl, failures: 0, retryAt: null, refreshAt: null } : {},
    ),
  },
}).createMachine({
  id: 'gatewayRegistration',
  context: ({ input }) => ({
    gatewaySid: input.gatewaySid,
    ttl: input.ttl,
    callId: input.callId,
    cseq: 1,
    failures: 0,
    lastStatus: null,
    lastReason: null,
    expiresAt: null,
    refreshAt: null,
    retryAt: null,
  }),
  initial: 'registering',
  on: {
    'gateway.updated': { target: '.registering', reenter: true, actions: 'applySettings' },
    'gateway.removed': '.unregistering',
  },
  states: {
    registering: {
      tags: [RegistrationState.Registering],
      invoke: {
        src: 'register',
        input: ({ context }) => ({
          gatewaySid: context.gatewaySid,
          callId: context.callId,
          cseq: context.cseq,
          expires: context.ttl,
        }),
        onDone: [
          {
            guard: { type: 'succeeded', params: ({ event }) => event.output },
            target: 'registered',
            actions: { type: 'recordSuccess', params: ({ event }) => event.output },
          },
          {
            target: 'retrying',
            actions: { type: 'recordFailure', params: ({ event }) => ({ outcome: event.output }) },
          },
        ],
        onError: {
          target: 'retrying',
          actions: { type: 'recordFailure', params: ({ event }) => ({ error: event.error }) },
        },
      },
    },
    registered: {
      tags: [RegistrationState.Registered],
      after: { REFRESH: 'registering' },
      on: { 'gateway.restored': { target: 'registered', reenter: true } },
    },
    retrying: {
      tags: [RegistrationState.Retrying],
      after: { RETRY: 'registering' },
      on: { 'gateway.restored': { target: 'retrying', reenter: true } },
    },
    unregistering: {
      tags: [RegistrationState.Unregistering],
      on: { 'gateway.updated': {}, 'gateway.removed': {} },
      invoke: {
        src: 'register',
        input: ({ context }) => ({
          gatewaySid: context.gatewaySid,
          callId: context.callId,
          cseq: context.cseq,
          expires: 0,
        }),
        onDone: 'removed',
        onError: 'removed',
      },
    },
    removed: { tags: [RegistrationState.Removed], type: 'final' },
  },
});

/** The REST-visible registration state of a snapshot (from its tag, never its state name). */
export function registrationStateOf(snapshot: {
  hasTag(tag: RegistrationState): boolean;
}): RegistrationState {
  for (const s of Object.values(RegistrationState)) if (snapshot.hasTag(s)) return s;
  return RegistrationState.Registering;
}
