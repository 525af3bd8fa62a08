/**
 * bench:machines — the state machines alone, with no I/O: what XState and the machines' own code
 * cost per call, with far less noise than bench:calls (no SIP, media, Redis or Postgres).
 *
 * Rows:
 *   call         the call machine through a whole inbound call: created (ring, app started),
 *                app.answer, media.endpointReady, sip.dialog, app.hangup, then a late http.complete;
 *                every effect a no-op, one listener on its domain events.
 *   interpreter  the interpreter machine running `<Pause length="0"/><Hangup/>` (bench:calls A's
 *                document with a zero-length pause: no timer): the fetch resolves at once with
 *                that document, the answer is confirmed a microtask later.
 *
 * Prints µs of process CPU (user + system) per call, the median (and the minimum) of several rounds
 * after a warm-up, and bytes allocated per call (measured in a child process with a young generation
 * large enough that no GC runs during a round: the heap's growth over the round).
 *
 * Usage: npm run bench:machines [-- --calls N --rounds R --only call|interpreter]
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createActor, toPromise } from 'xstate';
import { createCallMachine } from '../../src/actors/call/call.machine.js';
import type { CallInput } from '../../src/actors/call/call.types.js';
import type { CallEffects } from '../../src/actors/call/call-effects.js';
import { createInterpreterMachine } from '../../src/actors/interpreter/interpreter.machine.js';
import type { InterpreterInput } from '../../src/actors/interpreter/interpreter.types.js';
import type { InterpreterServices } from '../../src/actors/interpreter/services.js';
import type { MediaPort } from '../../src/media/port.js';
import type { PersistedDialog } from '../../src/sip/port.js';
import { allocationChild, bytesPerItem, cpuPerItem, row } from '../lib/micro-bench.js';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '7' },
    only: { type: 'string' },
    alloc: { type: 'boolean', default: false },
  },
});
const CALLS = Number(args.calls);
const ROUNDS = Number(args.rounds);

// ---- the call machine ---------------------------------------------------------------------------

const noop = () => {};
const never = () => new Promise<never>(noop);
const effects: CallEffects = {
  ring: noop,
  answer: noop,
  reject: noop,
  cancel: noop,
  hangUp: noop,
  invite: noop,
  endDialog: noop,
  createEndpoint: noop,
  applyRemoteSdp: noop,
  setMuted: noop,
  unbridge: noop,
  releaseMedia: noop,
  startApp: noop,
  redirectApp: () => true,
  endApp: noop,
  answerRefer: noop,
  notifyRefer: noop,
  transfer: noop,
  refer: noop,
  releaseAdmission: noop,
  notifyNoMedia: noop,
  admit: never,
  place: never,
  planRefer: never,
  sendDigits: never,
};
const callMachine = createCallMachine(effects);
const DIALOG = {
  callId: 'c1@bench',
  localUri: 'sip:+15550002222@127.0.0.1',
  localTag: 'l1',
  remoteUri: 'sip:+15550001111@127.0.0.1',
  remoteTag: 'r1',
  remoteTarget: 'sip:+15550001111@127.0.0.1:5062',
  localSeq: 1,
  remoteSeq: 1,
  routeSet: [],
} as unknown as PersistedDialog;
let n = 0;
let emitted = 0;
const countEmitted = () => void emitted++;

function callInput(): CallInput {
  n++;
  return {
    sid: `CA${n.toString(16).padStart(32, '0')}`,
    accountSid: 'AC0123456789abcdef0123456789abcdef',
    direction: 'inbound',
    from: '+15550001111',
    to: '+15550002222',
    apiVersion: '2012-04-24',
    createdAt: Date.now(),
    phoneNumberSid: 'PN0123456789abcdef0123456789abcdef',
    remoteSdp: 'v=0 theirs',
    numberCallback: null,
    app: {
      kind: 'markup',
      url: 'http://127.0.0.1:8080/voice',
      method: 'POST',
      fallbackUrl: null,
      fallbackMethod: 'POST',
      answered: false,
    },
  };
}

function oneCall(): void {
  const actor = createActor(callMachine, { input: callInput() });
  actor.on('*', countEmitted);
  actor.start();
  const at = Date.now();
  actor.send({ type: 'app.answer', at });
  actor.send({ type: 'media.endpointReady', sdp: 'v=0 ours', at });
  actor.send({ type: 'sip.dialog', dialog: DIALOG });
  actor.send({ type: 'app.hangup', at: at + 2000 });
  actor.send({ type: 'http.complete', at: at + 2000 });
  if (actor.getSnapshot().status !== 'done') throw new Error('the call did not end');
}

async function callRound(calls: number): Promise<void> {
  for (let i = 0; i < calls; i++) oneCall();
}

// ---- the interpreter machine ------------------------------------------------------------------

// No `sleep` service: an injected one costs an AbortController per Pause, which the server (a
// plain timer) does not pay.
const DOCUMENT = '<?xml version="1.0" encoding="UTF-8"?><Response><Pause length="0"/><Hangup/></Response>';
const unused = () => {
  throw new Error('not used by this document');
};
const services: InterpreterServices = {
  media: {} as MediaPort,
  mediaEvents: { on: () => noop },
  fetch: async (req) => ({
    ok: true,
    status: 200,
    headers: { 'content-type': 'text/xml' },
    body: DOCUMENT,
    contentType: 'text/xml',
    url: req.url,
    method: req.method,
    attempts: 1,
    usedFallback: false,
    idempotencyToken: 'bench',
  }),
  call: {
    answer: (_sid, replyTo) => queueMicrotask(() => replyTo.send({ type: 'call.answered' })),
    reject: noop,
    hangup: noop,
    sendDigits: unused,
    refer: unused,
  },
  dialer: { dial: unused },
  sendSms: unused,
  sendEmail: unused,
  createRecording: unused,
  notify: noop,
};
const interpreterMachine = createInterpreterMachine(services);

function interpreterInput(): InterpreterInput {
  n++;
  const callSid = `CA${n.toString(16).padStart(32, '0')}`;
  return {
    call: {
      callSid,
      accountSid: 'AC0123456789abcdef0123456789abcdef',
      from: '+15550001111',
      to: '+15550002222',
      direction: 'inbound',
      endpointId: callSid,
    },
    url: 'http://127.0.0.1:8080/voice',
  };
}

async function interpreterRound(calls: number): Promise<void> {
  // Many at once, as on a busy node (their steps interleave on the microtask queue).
  const batch = 100;
  for (let i = 0; i < calls; i += batch) {
    const runs: Promise<unknown>[] = [];
    for (let j = 0; j < batch && i + j < calls; j++) {
      const actor = createActor(interpreterMachine, { input: interpreterInput() });
      actor.on('*', countEmitted);
      runs.push(toPromise(actor.start()));
    }
    const outputs = await Promise.all(runs);
    if (outputs.some((o) => (o as { end?: string }).end !== 'hangup')) throw new Error('not hung up');
  }
}

// ---- measuring --------------------------------------------------------------------------------

const ROWS: Record<string, (calls: number) => Promise<void>> = {
  call: callRound,
  interpreter: interpreterRound,
};
const rows = args.only ? [args.only] : Object.keys(ROWS);

if (args.alloc) {
  // The child: prints {row: bytes} as JSON.
  const out: Record<string, number> = {};
  for (const r of rows) out[r] = await bytesPerItem(ROWS[r]!, CALLS, 200, ROUNDS);
  process.stdout.write(JSON.stringify(out));
} else {
  const bytes = allocationChild(fileURLToPath(import.meta.url), [
    '--rounds',
    String(ROUNDS),
    '--calls',
    String(Math.min(CALLS, 1000)),
    ...(args.only ? ['--only', args.only] : []),
  ]);
  console.log(`bench:machines — ${CALLS} calls per round, median of ${ROUNDS} rounds after a warm-up`);
  for (const r of rows) console.log(row(r, 12, 'call', await cpuPerItem(ROWS[r]!, CALLS, ROUNDS), bytes[r]));
  if (emitted === 0) throw new Error('no domain events seen');
}
