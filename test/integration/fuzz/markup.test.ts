/**
 * Markup fuzz: mutated RCML documents (test/support/fuzz/markup.ts) served by a local webhook server.
 * - Volume: each document through the real interpreter, real parser and real WebhookClient, the
 *   Notifications written by the real Notifier into Postgres; the call intents are recorded.
 * - Real calls: sipp calls numbers whose VoiceUrl serves a mutated document to the running server.
 * Every case must give a Notification with a markup code, end the call (hang up or reject), and leave
 * nothing live; the service keeps answering. Size: FUZZ_SCALE (default 1); seed: FUZZ_SEED (printed).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createInterpreterMachine } from '../../../src/actors/interpreter/interpreter.machine.js';
import {
  type CallControl,
  type InterpreterServices,
  MediaEventRouter,
  webhookFetcher,
} from '../../../src/actors/interpreter/services.js';
import { newSid, SidPrefix } from '../../../src/ids.js';
import type { NotifyInput } from '../../../src/notifications/notifier.js';
import { WebhookClient } from '../../../src/webhooks/index.js';
import { FakeMediaPort } from '../../support/fake-media.js';
import {
  describeCase,
  MARKUP_NOTIFICATION_CODES,
  type MarkupCase,
  markupCase,
  SERIAL_MUTATIONS,
} from '../../support/fuzz/markup.js';
import { fuzzScale, fuzzSeed } from '../../support/fuzz/prng.js';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { runSipp } from '../../support/sipp.js';
import { until } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

const SCALE = fuzzScale();
const SEED = fuzzSeed(SCALE > 1 ? Math.floor(Math.random() * 2 ** 31) : 1);
const VOLUME_CASES = 40 * SCALE;
const REAL_CALLS = 3 * SCALE;
const TERMINAL = ['completed', 'canceled', 'busy', 'failed', 'no-answer'];

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };

beforeAll(async () => {
  console.info(`markup fuzz: FUZZ_SEED=${SEED} FUZZ_SCALE=${SCALE}`);
  ts = await startTestServer({ label: 'fuzzmarkup' });
  hooks = await startWebhookServer();
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'fuzz@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

function serve(path: string, c: MarkupCase): void {
  hooks.script(path, { status: 200, headers: { 'Content-Type': c.contentType }, body: c.body });
}

describe(`markup fuzz (seed ${SEED})`, () => {
  it(`${VOLUME_CASES} documents through the interpreter: a stored Notification and a hang-up each`, async () => {
    const stored: Array<Promise<{ input: NotifyInput; ok: boolean }>> = [];
    const notify = (n: NotifyInput) =>
      stored.push(ts.server.notifier.notify(n).then((row) => ({ input: n, ok: row !== null })));
    const client = new WebhookClient({
      retries: 0,
      totalTimeoutMs: 10_000,
      onFailure: (n) =>
        notify({
          accountSid: n.accountSid,
          callSid: n.context.callSid ?? null,
          errorCode: n.errorCode,
          log: n.log,
          messageText: n.messageText,
          requestUrl: n.requestUrl,
          requestMethod: n.requestMethod,
          requestVariables: n.requestVariables,
          responseHeaders: { ...n.responseHeaders },
          responseBody: n.responseBody,
        }),
    });
    const media = new FakeMediaPort();
    for (let i = 0; i < VOLUME_CASES * 4; i++) media.collectResults.push({ digits: '', reason: 'timeout' });
    const router = new MediaEventRouter(media);
    const ends = new Map<string, string[]>();
    const intent = (sid: string, what: string) => ends.set(sid, [...(ends.get(sid) ?? []), what]);
    const call: CallControl = {
      answer: (_sid, replyTo) => replyTo.send({ type: 'call.answered' }),
      reject: (sid, reason) => intent(sid, `reject:${reason}`),
      hangup: (sid) => intent(sid, 'hangup'),
      sendDigits: async () => {},
      refer: async () => ({ referStatus: 481, notifyStatus: null, ended: true }),
    };
    const refuse = async () => {
      throw new Error('not used by the fuzz documents');
    };
    const services: InterpreterServices = {
      media,
      mediaEvents: router,
      fetch: webhookFetcher(client, () => owner.creds.secret),
      call,
      dialer: { dial: refuse },
      sendSms: refuse,
      sendEmail: refuse,
      createRecording: refuse,
      notify,
      sleep: async () => {},
    };
    const machine = createInterpreterMachine(services);
    const cases = Array.from({ length: VOLUME_CASES }, (_, i) => markupCase(SEED, i));
    const sids = new Map<MarkupCase, string>();
    try {
      for (let from = 0; from < cases.length; from += 8) {
        await Promise.all(
          cases.slice(from, from + 8).map(async (c) => {
            const sid = newSid(SidPrefix.Call);
            sids.set(c, sid);
            serve(`/v/${c.index}`, c);
            const actor = createActor(machine, {
              input: {
                call: {
                  callSid: sid,
                  accountSid: owner.sid,
                  from: '+15550001111',
                  to: '+15550002222',
                  direction: 'inbound',
                  endpointId: sid,
                },
                url: `${hooks.origin}/v/${c.index}`,
              },
            });
            actor.start();
            const out = await Promise.race([
              toPromise(actor),
              new Promise((r) => setTimeout(() => r({ end: 'stuck' }), 20_000)),
            ]);
            actor.stop();
            expect(out, describeCase(c)).toMatchObject({ end: expect.stringMatching(/^(hangup|rejected)$/) });
            expect(ends.get(sid)?.length ?? 0, describeCase(c)).toBeGreaterThan(0);
          }),
        );
      }
      const rows = await Promise.all(stored);
      // Nothing the customer's server sent may cost the Notification that reports it.
      expect(rows.filter((r) => !r.ok).map((r) => r.input.messageText)).toEqual([]);
      for (const c of cases) {
        const sid = sids.get(c)!;
        const codes = rows.filter((r) => r.input.callSid === sid).map((r) => r.input.errorCode);
        expect(
          codes.some((code) => MARKUP_NOTIFICATION_CODES.includes(code)),
          describeCase(c),
        ).toBe(true);
      }
    } finally {
      router.close();
      client.close();
    }
  }, 120_000);

  it(`${REAL_CALLS} real calls from sipp: Notification, clean end, nothing left live`, async () => {
    const target = `127.0.0.1:${ts.server.sip!.stack.port}`;
    for (let i = 0; i < REAL_CALLS; i++) {
      // Every other call gets a document that still runs (warnings only): answered, verbs, hang-up.
      const c = markupCase(SEED, 100_000 + i, i % 2 === 1 ? { exclude: SERIAL_MUTATIONS } : {});
      const path = `/call/${i}`;
      serve(path, c);
      const number = `+1555030${String(i).padStart(4, '0')}`;
      const bought = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
        auth: owner.creds,
        form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}${path}` },
      });
      expect(bought.status).toBe(201);
      const r = await runSipp({ scenario: 'uac-call-expect-any-end.xml', remote: target, service: number });
      expect(r.errors, describeCase(c)).toBe('');
      const call = await until(
        async () =>
          (
            await ts.request(
              'GET',
              `${API}/Accounts/${owner.sid}/Calls.json?To=${encodeURIComponent(number)}`,
              {
                auth: owner.creds,
              },
            )
          ).json.calls[0],
        (x) => TERMINAL.includes(x?.status),
      );
      expect(TERMINAL, describeCase(c)).toContain(call?.status);
      const notes = await until(
        async () =>
          (
            await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls/${call.sid}/Notifications.json`, {
              auth: owner.creds,
            })
          ).json.notifications as Array<{ error_code: string | number }>,
        (l) => l.some((n) => MARKUP_NOTIFICATION_CODES.includes(Number(n.error_code))),
      );
      expect(
        notes.some((n) => MARKUP_NOTIFICATION_CODES.includes(Number(n.error_code))),
        describeCase(c),
      ).toBe(true);
    }
    // No call of the account is left live (SIP legs themselves linger 32 s for retransmissions).
    for (const status of ['queued', 'ringing', 'in-progress']) {
      const live = await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?Status=${status}`, {
        auth: owner.creds,
      });
      expect(live.json.total).toBe(0);
    }
    const alive = await ts.request('GET', `${API}/Accounts/${owner.sid}.json`, { auth: owner.creds });
    expect(alive.status).toBe(200);
  }, 300_000);
});
