/**
 * bench:sip's floor: what a REGISTER with digest costs in Node itself on this machine, without our
 * SIP stack. One UDP socket; headers found by scanning the text; a 401 with a stateless HMAC-SHA256
 * nonce; the digest response checked against HA1s made from sipp's CSV at start; the binding written
 * by one Redis script (the same three writes as ours: HSET, PEXPIREAT, ZADD) before the 200. No
 * validation, no retransmission cache, no observers: the registrar's figure over this one is what
 * our layers cost, and this one's figure over Kamailio's is what Node costs.
 * Usage (forked by bench:sip): tsx ops/bench/sip-floor.ts HOST PORT CSV REDIS_URL KEY_PREFIX
 */
import { createHash, createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createClient } from 'redis';

const [
  host = '127.0.0.1',
  port = '0',
  csv = '',
  redisUrl = 'redis://127.0.0.1:6379',
  prefix = 'benchfloor:',
] = process.argv.slice(2);
const md5 = (s: string) => createHash('md5').update(s, 'latin1').digest('hex');
const key = createSecretKey(randomBytes(32));
const mac = (text: string) => createHmac('sha256', key).update(text).digest('hex').slice(0, 32);

/** login → password, from the CSV's `login;[authentication username=… password=…]` lines. */
const passwords = new Map<string, string>();
for (const line of readFileSync(csv, 'utf8').split('\n')) {
  const m = /^([^;]+);\[authentication username=\S+ password=(\S+)\]$/.exec(line);
  if (m) passwords.set(m[1] as string, m[2] as string);
}
const ha1s = new Map<string, string>();

const BIND = `redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
return 1`;
const redis = await createClient({ url: redisUrl }).connect();
const sha = await redis.scriptLoad(BIND);

function header(raw: string, name: string): string {
  const i = raw.indexOf(`\r\n${name}:`);
  if (i < 0) return '';
  const end = raw.indexOf('\r\n', i + 2);
  return raw.slice(i + 2, end);
}
const param = (text: string, name: string) => new RegExp(`[\\s,]${name}="?([^",]*)"?`).exec(text)?.[1] ?? '';

const socket = createSocket({ type: 'udp4', recvBufferSize: 4 << 20, sendBufferSize: 4 << 20 });
socket.on('message', (buf, peer) => {
  const raw = buf.toString('latin1');
  const to = header(raw, 'To');
  const login = /sip:([^@]+)@/.exec(to)?.[1] ?? '';
  const realm = /@([^>;:]+)/.exec(to)?.[1] ?? host;
  const head = `${header(raw, 'Via')}\r\n${header(raw, 'From')}\r\n${to};tag=floor\r\n${header(raw, 'Call-ID')}\r\n${header(raw, 'CSeq')}\r\n`;
  const reply = (status: string, extra: string) =>
    socket.send(`SIP/2.0 ${status}\r\n${head}${extra}Content-Length: 0\r\n\r\n`, peer.port, peer.address);
  const challenge = () => {
    const at = Date.now().toString(16);
    reply(
      '401 Unauthorized',
      `WWW-Authenticate: Digest realm="${realm}", nonce="${at}.${mac(`${at}\n${realm}\n${peer.address}`)}", algorithm=MD5, qop="auth"\r\n`,
    );
  };
  const auth = header(raw, 'Authorization');
  if (!auth) return challenge();
  const [at = '', nonceMac = ''] = param(auth, 'nonce').split('.');
  const password = passwords.get(login);
  if (password === undefined || nonceMac !== mac(`${at}\n${realm}\n${peer.address}`)) return challenge();
  const ha1Key = `${login}@${realm}`;
  let ha1 = ha1s.get(ha1Key);
  if (ha1 === undefined) {
    ha1 = md5(`${login}:${realm}:${password}`);
    ha1s.set(ha1Key, ha1);
  }
  const ha2 = md5(`REGISTER:${param(auth, 'uri')}`);
  const expected = md5(
    `${ha1}:${param(auth, 'nonce')}:${param(auth, 'nc')}:${param(auth, 'cnonce')}:${param(auth, 'qop')}:${ha2}`,
  );
  if (expected !== param(auth, 'response')) return challenge();
  const contact = header(raw, 'Contact').slice('Contact:'.length).trim();
  const expiresAt = Date.now() + 3600_000;
  redis
    .evalSha(sha, {
      keys: [`${prefix}${ha1Key}`, `${prefix}index`],
      arguments: [contact, JSON.stringify({ contact, expiresAt }), String(expiresAt)],
    })
    .then(
      () => reply('200 OK', `Contact: ${contact};expires=3600\r\n`),
      () => reply('500 Server Error', ''),
    );
});
socket.bind(Number(port), host, () => process.send?.({ ready: true }));
process.on('SIGTERM', () => {
  socket.close();
  void redis.quit().then(() => process.exit(0));
});
