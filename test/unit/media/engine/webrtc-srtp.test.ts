import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RtpHeader, SrtpSession } from 'werift';
import { Ghash } from '../../../../src/media/engine/webrtc/ghash.js';
import {
  SRTP_AEAD_AES_128_GCM,
  SRTP_AES128_CM_HMAC_SHA1_80,
  type SrtpConfig,
  SrtpCrypto,
} from '../../../../src/media/engine/webrtc/srtp.js';

/** Both ends of one DTLS-SRTP association: `a` is ours, `b` the far end's (keys swapped). */
function pair(profile: number, saltBytes: number): { ours: SrtpConfig; theirs: SrtpConfig } {
  const keys = {
    localMasterKey: randomBytes(16),
    localMasterSalt: randomBytes(saltBytes),
    remoteMasterKey: randomBytes(16),
    remoteMasterSalt: randomBytes(saltBytes),
  };
  return {
    ours: { keys, profile },
    theirs: {
      keys: {
        localMasterKey: keys.remoteMasterKey,
        localMasterSalt: keys.remoteMasterSalt,
        remoteMasterKey: keys.localMasterKey,
        remoteMasterSalt: keys.localMasterSalt,
      },
      profile,
    },
  };
}

function rtp(seq: number, payload: Buffer, ssrc = 0x11223344): Buffer {
  const h = new RtpHeader({
    payloadType: 111,
    sequenceNumber: seq,
    timestamp: seq * 960,
    ssrc,
    marker: seq % 7 === 0,
  });
  return Buffer.concat([h.serialize(h.serializeSize), payload]);
}

const profiles = [
  { name: 'AES_CM_128_HMAC_SHA1_80', profile: SRTP_AES128_CM_HMAC_SHA1_80, salt: 14 },
  { name: 'AEAD_AES_128_GCM', profile: SRTP_AEAD_AES_128_GCM, salt: 12 },
];

describe.each(profiles)('SRTP $name against werift', ({ profile, salt }) => {
  // Sequence numbers run across a wrap, so the rollover counter enters the keystream and tag.
  const seqs = Array.from({ length: 40 }, (_, i) => (65520 + i) & 0xffff);

  it('protects byte for byte as werift does, and werift decrypts it', () => {
    const { ours, theirs } = pair(profile, salt);
    const us = SrtpCrypto.create(ours)!;
    const werOut = new SrtpSession(ours as never);
    const werFar = new SrtpSession(theirs as never);
    for (const [i, seq] of seqs.entries()) {
      const payload = randomBytes(1 + ((i * 37) % 200));
      const packet = rtp(seq, payload);
      const mine = us.protect(packet)!;
      const h = RtpHeader.deSerialize(packet);
      expect(mine.equals(werOut.encrypt(payload, h))).toBe(true);
      expect(werFar.decrypt(mine).equals(packet)).toBe(true);
    }
  });

  it('decrypts what werift protects, in place, and refuses a tampered packet', () => {
    const { ours, theirs } = pair(profile, salt);
    const us = SrtpCrypto.create(ours)!;
    const far = new SrtpSession(theirs as never);
    for (const seq of seqs) {
      const payload = randomBytes(60);
      const packet = rtp(seq, payload);
      const wire = far.encrypt(payload, RtpHeader.deSerialize(packet));
      const forged = Buffer.from(wire);
      forged[forged.length - 20]! ^= 1;
      expect(us.unprotect(forged)).toBeNull();
      expect(us.unprotect(wire)?.equals(packet)).toBe(true);
    }
  });

  it('round-trips a header with CSRCs and an extension, small and large', () => {
    const { ours, theirs } = pair(profile, salt);
    const us = SrtpCrypto.create(ours)!;
    const them = SrtpCrypto.create(theirs)!;
    const header = Buffer.from([
      0x92, 0x6f, 0x12, 0x34, 0, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 9, 0, 0, 0, 8, 0xbe, 0xde, 0, 1, 1,
      2, 3, 4,
    ]);
    for (const size of [33, 1100]) {
      const packet = Buffer.concat([header, randomBytes(size)]);
      expect(them.unprotect(us.protect(packet)!)?.equals(packet)).toBe(true);
    }
  });

  it('decrypts out of order, repeated and growing packets (keystream is made ahead in sequence)', () => {
    const { ours, theirs } = pair(profile, salt);
    const us = SrtpCrypto.create(ours)!;
    const far = new SrtpSession(theirs as never);
    const sent = Array.from({ length: 30 }, (_, i) => {
      const seq = (65530 + i) & 0xffff;
      const payload = randomBytes(i < 15 ? 40 : 40 + i * 20);
      const packet = rtp(seq, payload);
      return { packet, wire: far.encrypt(payload, RtpHeader.deSerialize(packet)) };
    });
    const order = [
      0, 2, 1, 3, 3, 9, 4, 5, 6, 7, 8, 10, 12, 11, 13, 14, 15, 20, 16, 17, 18, 19, 21, 22, 29, 23,
    ];
    for (const i of order) {
      const { packet, wire } = sent[i]!;
      expect(us.unprotect(Buffer.from(wire))?.equals(packet)).toBe(true);
    }
  });

  it('refuses what is not RTP', () => {
    const us = SrtpCrypto.create(pair(profile, salt).ours)!;
    expect(us.protect(Buffer.alloc(8))).toBeNull();
    expect(us.unprotect(Buffer.alloc(20))).toBeNull();
  });
});

describe('GHASH', () => {
  it('authenticates as OpenSSL AES-GCM does', () => {
    const key = randomBytes(16);
    for (const [aadLen, textLen] of [
      [12, 0],
      [12, 1],
      [16, 16],
      [28, 161],
    ] as const) {
      const iv = randomBytes(12);
      const aad = randomBytes(aadLen);
      const text = randomBytes(textLen);
      const gcm = createCipheriv('aes-128-gcm', key, iv);
      gcm.setAAD(aad);
      const c = Buffer.concat([gcm.update(text), gcm.final()]);
      const expected = gcm.getAuthTag();
      const ecb = createCipheriv('aes-128-ecb', key, null);
      ecb.setAutoPadding(false);
      const g = new Ghash(ecb.update(Buffer.alloc(16)));
      const tag = Buffer.alloc(16);
      g.update(aad);
      g.update(c);
      g.finish(aadLen, textLen, tag);
      const mask = ecb.update(Buffer.concat([iv, Buffer.from([0, 0, 0, 1])]));
      for (let i = 0; i < 16; i++) tag[i] = tag[i]! ^ mask[i]!;
      expect(tag.equals(expected)).toBe(true);
    }
  });

  it('refuses an unsupported profile', () => {
    expect(SrtpCrypto.create({ ...pair(1, 14).ours, profile: 2 })).toBeNull();
  });
});
