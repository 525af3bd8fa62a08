/**
 * Test harness for the interpreter: a real in-process webhook server and WebhookClient for markup and
 * action requests, the fake media port, and fakes for the call intents, the Dialer, SMS, email and
 * recordings that record what they were asked.
 */
import { type Actor, createActor, toPromise, waitFor } from 'xstate';
import { createInterpreterMachine } from '../../../../src/actors/interpreter/interpreter.machine.js';
import type {
  AnswerOutcome,
  InterpreterInput,
} from '../../../../src/actors/interpreter/interpreter.types.js';
import {
  type CallControl,
  type DialOutcome,
  type DialRequest,
  type EmailRequest,
  type InterpreterServices,
  MediaEventRouter,
  type RecordingRequest,
  type ReplyTo,
  type SmsRequest,
  webhookFetcher,
} from '../../../../src/actors/interpreter/services.js';
import type { NotifyInput } from '../../../../src/notifications/notifier.js';
import { WebhookClient } from '../../../../src/webhooks/index.js';
import { FakeMediaPort } from '../../../support/fake-media.js';
import {
  type RecordedRequest,
  startWebhookServer,
  type WebhookServer,
} from '../../../support/webhook-server.js';

export const ACCOUNT = 'AC0123456789abcdef0123456789abcdef';
export const CALL = 'CA0123456789abcdef0123456789abcdef';
export const TOKEN = 'secret-token';

/** A markup document. */
export const xml = (inner: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${inner}</Response>`;

/** Form parameters of a recorded request (body for POST, query for GET). */
export function paramsOf(r: RecordedRequest): URLSearchParams {
  if (r.method === 'GET') return new URLSearchParams(r.url.split('?')[1] ?? '');
  return new URLSearchParams(r.rawBody.toString('utf8'));
}

type Intent =
  | { type: 'refer'; referTo: string }
  | { type: 'answer' }
  | { type: 'reject'; reason: string }
  | { type: 'hangup' }
  | { type: 'sendDigits'; digits: string };

/** A Dialer whose outcomes the test scripts; `held` dials wait until aborted. */
export class FakeDialer {
  readonly requests: DialRequest[] = [];
  readonly aborted: DialRequest[] = [];
  readonly outcomes: Array<DialOutcome | 'hold'> = [];
  dial(request: DialRequest, signal: AbortSignal): Promise<DialOutcome> {
    this.requests.push(request);
    const next = this.outcomes.shift() ?? 'hold';
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => {
        this.aborted.push(request);
        reject(new Error('aborted'));
      });
      if (next !== 'hold') resolve(next);
    });
  }
}

export interface Harness {
  readonly server: WebhookServer;
  readonly media: FakeMediaPort;
  readonly dialer: FakeDialer;
  readonly intents: Intent[];
  readonly notifications: NotifyInput[];
  readonly sms: SmsRequest[];
  readonly emails: EmailRequest[];
  readonly recordings: RecordingRequest[];
  readonly services: InterpreterServices;
  /** `http://127.0.0.1:<port>` + path */
  url(path: string): string;
  start(input?: Partial<InterpreterInput>): Actor<ReturnType<typeof createInterpreterMachine>>;
  /** From now on each answer waits for the test to reply to it (`call.answered` or `call.answerFailed`). */
  holdAnswers(): Array<ReplyTo<AnswerOutcome>>;
  /** Runs to the end and returns the output. */
  run(input?: Partial<InterpreterInput>): Promise<unknown>;
  close(): Promise<void>;
}

export async function createHarness(overrides: Partial<InterpreterServices> = {}): Promise<Harness> {
  const server = await startWebhookServer();
  const media = new FakeMediaPort();
  const dialer = new FakeDialer();
  const intents: Intent[] = [];
  const notifications: NotifyInput[] = [];
  const sms: SmsRequest[] = [];
  const emails: EmailRequest[] = [];
  const recordings: RecordingRequest[] = [];
  const client = new WebhookClient({
    retries: 0,
    connectTimeoutMs: 2_000,
    totalTimeoutMs: 5_000,
    // What the composition root does: every failed attempt becomes a Notification.
    onFailure: (n) =>
      notifications.push({
        accountSid: n.accountSid,
        callSid: n.context.callSid ?? null,
        errorCode: n.errorCode,
        log: n.log,
        messageText: n.messageText,
        requestUrl: n.requestUrl,
        requestMethod: n.requestMethod,
        requestVariables: n.requestVariables,
      }),
  });
  const router = new MediaEventRouter(media);
  let held: Array<ReplyTo<AnswerOutcome>> | null = null;
  const call: CallControl = {
    answer: (_sid, replyTo) => {
      intents.push({ type: 'answer' });
      if (held) held.push(replyTo);
      else replyTo.send({ type: 'call.answered' });
    },
    reject: (_sid, reason) => intents.push({ type: 'reject', reason }),
    hangup: () => intents.push({ type: 'hangup' }),
    sendDigits: async (_sid, digits) => {
      intents.push({ type: 'sendDigits', digits });
    },
    refer: async (_sid, referTo) => {
      intents.push({ type: 'refer', referTo });
      return { referStatus: 202, notifyStatus: 200, ended: false };
    },
  };
  const services: InterpreterServices = {
    media,
    mediaEvents: router,
    fetch: webhookFetcher(client, () => TOKEN),
    call,
    dialer,
    sendSms: async (r) => {
      sms.push(r);
      return { sid: `SM${'1'.repeat(32)}`, status: 'sent' };
    },
    sendEmail: async (r) => {
      emails.push(r);
      return { sid: `EM${'2'.repeat(32)}`, status: 'sent' };
    },
    createRecording: async (r) => {
      recordings.push(r);
      return {
        sid: r.recordingSid,
        url: `http://api.test/2012-04-24/Accounts/${r.accountSid}/Recordings/${r.recordingSid}`,
        durationSeconds: r.durationSeconds,
      };
    },
    notify: (n) => notifications.push(n),
    ...overrides,
  };
  const machine = createInterpreterMachine(services);
  const url = (path: string) => `${server.origin}${path}`;
  const actors: Actor<typeof machine>[] = [];
  const start = (input: Partial<InterpreterInput> = {}) => {
    const actor = createActor(machine, {
      input: {
        call: {
          callSid: CALL,
          accountSid: ACCOUNT,
          from: '+15550001111',
          to: '+15550002222',
          direction: 'inbound',
          endpointId: CALL,
        },
        url: url('/voice'),
        ...input,
      },
    });
    actors.push(actor);
    actor.start();
    return actor;
  };
  return {
    server,
    media,
    dialer,
    intents,
    notifications,
    sms,
    emails,
    recordings,
    services,
    url,
    start,
    holdAnswers: () => {
      held ??= [];
      return held;
    },
    run: (input) => toPromise(start(input)),
    async close() {
      for (const a of actors) a.stop();
      router.close();
      client.close();
      await server.close();
    },
  };
}

/** Waits until the actor's state matches `path` (e.g. `{ executing: { running: 'say' } }`). */
export function inState(actor: Actor<ReturnType<typeof createInterpreterMachine>>, path: string) {
  return waitFor(actor, (s) => s.matches(path as never), { timeout: 5_000 });
}
