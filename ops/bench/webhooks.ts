/**
 * bench:webhooks — one outgoing webhook request through the WebhookClient, against a local HTTP server
 * in a child process (its CPU is not counted), next to a bare undici request to the same server in the
 * same run: what the client's signing, policy, timers and layers add to undici's own cost.
 *
 * Rows:
 *   undici   `Agent.request` POSTing the same form body with the same headers (signatures computed
 *            once, outside the loop), the response body read as text: the peer.
 *   markup   `webhookFetcher(client)` as the interpreter fetches markup: a call's parameters, a
 *            fallback URL, a `<Pause/><Hangup/>` document back.
 *   status   an SMS status callback as SmsCallbacks sends it (idempotency token given), an empty 200.
 *
 * Prints µs of process CPU (user + system) per request, the median (and the minimum) of several rounds
 * after a warm-up, with 50 requests in flight, and bytes allocated per request (measured in a child
 * process with a young generation large enough that no GC runs during a round: the heap's growth).
 *
 * Runs the build (`npm run build`, made first) as the server does, so closures carry no tsx overhead;
 * BENCH_SERVER_DIR=<checkout> measures that checkout's build instead (before/after in one bench).
 *
 * Usage: npm run bench:webhooks [-- --requests N --rounds R --only undici|markup|status]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import type * as Services from '../../src/actors/interpreter/services.js';
import type * as Webhooks from '../../src/webhooks/index.js';
import type { Params, WebhookResult } from '../../src/webhooks/index.js';
import { allocationChild, bytesPerItem, cpuPerItem, row } from '../lib/micro-bench.js';
import { SERVER_DIR, serverEntry } from './support.js';

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '7' },
    only: { type: 'string' },
    alloc: { type: 'boolean', default: false },
    port: { type: 'string' },
    dir: { type: 'string' },
  },
});
// The parent builds (once); its allocation child is handed the build to load.
if (!args.dir) serverEntry();
const DIST = `${args.dir ?? SERVER_DIR}/dist`;
const webhooks = (await import(`${DIST}/webhooks/index.js`)) as typeof Webhooks;
const { webhookFetcher } = (await import(`${DIST}/actors/interpreter/services.js`)) as typeof Services;
const { encodeForm, switchboardSignature, twilioSignature, WebhookClient } = webhooks;
const REQUESTS = Number(args.requests);
const ROUNDS = Number(args.rounds);
const IN_FLIGHT = 50;

const DOCUMENT = '<?xml version="1.0" encoding="UTF-8"?><Response><Pause length="1"/><Hangup/></Response>';
/** The peer server: markup for /voice, an empty 200 for anything else. Runs in its own process. */
const SERVER = `
const http = require('node:http');
const doc = ${JSON.stringify(DOCUMENT)};
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url.startsWith('/voice')) {
      res.writeHead(200, { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(doc) });
      res.end(doc);
    } else {
      res.writeHead(200, { 'content-length': 0 });
      res.end();
    }
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

async function startPeer(): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { port: Number(chunk.toString().trim()), child };
}

const ACCOUNT = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = '0123456789abcdef0123456789abcdef';
let n = 0;
const sid = (prefix: string) => `${prefix}${(++n).toString(16).padStart(32, '0')}`;

function callParams(): Params {
  return [
    ['CallSid', sid('CA')],
    ['AccountSid', ACCOUNT],
    ['From', '+15550001111'],
    ['To', '+15550002222'],
    ['CallStatus', 'ringing'],
    ['ApiVersion', '2010-04-01'],
    ['Direction', 'inbound'],
  ];
}

function statusParams(): Params {
  const s = sid('SM');
  return [
    ['MessageSid', s],
    ['SmsSid', s],
    ['MessageStatus', 'delivered'],
    ['SmsStatus', 'delivered'],
    ['AccountSid', ACCOUNT],
    ['From', '+15550001111'],
    ['To', '+15550002222'],
    ['Body', 'bench message 1'],
    ['ApiVersion', '2010-04-01'],
  ];
}

type Row = (requests: number) => Promise<void>;

function rowsFor(port: number): { rows: Record<string, Row>; close: () => Promise<void> } {
  const base = `http://127.0.0.1:${port}`;
  const client = new WebhookClient({ logger: undefined });
  const fetcher = webhookFetcher(client, () => TOKEN);
  const agent = new Agent({ connections: 256 });
  // The peer sends the headers the client sends, signed once: undici's own share of a request.
  const signed = statusParams();
  const headers = {
    'User-Agent': 'Switchboard-Webhooks/0.1',
    Accept: 'text/xml, application/xml, text/plain, */*',
    'X-Twilio-Signature': twilioSignature(TOKEN, `${base}/status`, signed),
    'X-Switchboard-Signature': switchboardSignature(TOKEN, 1, encodeForm(signed)),
    'I-Twilio-Idempotency-Token': 'SM-token',
    'X-Switchboard-Idempotency-Token': 'SM-token',
    'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8',
  };
  const check = (r: WebhookResult) => {
    if (!r.ok) throw new Error(`webhook failed: ${r.kind} ${r.message}`);
  };
  const inBatches = async (requests: number, one: () => Promise<void>) => {
    for (let i = 0; i < requests; i += IN_FLIGHT) {
      const batch: Promise<void>[] = [];
      for (let j = 0; j < IN_FLIGHT && i + j < requests; j++) batch.push(one());
      await Promise.all(batch);
    }
  };
  const rows: Record<string, Row> = {
    undici: (requests) =>
      inBatches(requests, async () => {
        const body = Buffer.from(encodeForm(statusParams()), 'utf8');
        const res = await agent.request({
          origin: base,
          path: '/status',
          method: 'POST',
          headers,
          body,
        });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
      }),
    markup: (requests) =>
      inBatches(requests, async () => {
        const r = await fetcher({
          url: `${base}/voice`,
          method: 'POST',
          params: callParams(),
          fallback: { url: `${base}/fallback`, method: 'POST' },
          accountSid: ACCOUNT,
          callSid: 'CA0',
        });
        check(r);
        if (r.ok && r.body !== DOCUMENT) throw new Error('unexpected document');
      }),
    status: (requests) =>
      inBatches(requests, async () => {
        const params = statusParams();
        check(
          await client.request({
            url: `${base}/status`,
            method: 'POST',
            params,
            accountSid: ACCOUNT,
            authToken: TOKEN,
            idempotencyToken: `${params[0]![1]}-delivered`,
            context: { smsSid: params[0]![1] },
          }),
        );
      }),
  };
  return {
    rows,
    close: async () => {
      client.close();
      await agent.close();
    },
  };
}

if (args.alloc) {
  // The child: prints {row: bytes} as JSON.
  const { rows, close } = rowsFor(Number(args.port));
  const names = args.only ? [args.only] : Object.keys(rows);
  const out: Record<string, number> = {};
  for (const name of names) out[name] = await bytesPerItem(rows[name]!, REQUESTS, 500, ROUNDS);
  await close();
  process.stdout.write(JSON.stringify(out));
} else {
  const peer = await startPeer();
  try {
    const bytes = allocationChild(fileURLToPath(import.meta.url), [
      '--port',
      String(peer.port),
      '--dir',
      SERVER_DIR,
      '--rounds',
      String(ROUNDS),
      '--requests',
      String(Math.min(REQUESTS, 1000)),
      ...(args.only ? ['--only', args.only] : []),
    ]);
    const { rows, close } = rowsFor(peer.port);
    const names = args.only ? [args.only] : Object.keys(rows);
    console.log(
      `bench:webhooks (${DIST}) — ${REQUESTS} requests per round, ${IN_FLIGHT} in flight, median of ${ROUNDS} rounds after a warm-up`,
    );
    for (const name of names) {
      console.log(row(name, 8, 'request', await cpuPerItem(rows[name]!, REQUESTS, ROUNDS), bytes[name]));
    }
    await close();
  } finally {
    peer.child.kill();
  }
}
