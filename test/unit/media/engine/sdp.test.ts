import sdpTransform from 'sdp-transform';
import { describe, expect, it } from 'vitest';
import { answerDirection, buildSdp, negotiate } from '../../../../src/media/engine/sdp.js';

function offer(m: string, extra: string[] = [], c = 'c=IN IP4 192.0.2.10'): string {
  return ['v=0', 'o=- 1 1 IN IP4 192.0.2.10', 's=-', c, 't=0 0', m, ...extra, ''].join('\r\n');
}

describe('SDP offer/answer (RFC 3264)', () => {
  it('writes an offer with PCMU, PCMA and telephone-event 101', () => {
    const sdp = buildSdp({
      address: '127.0.0.1',
      port: 20000,
      sessionId: 42,
      version: 1,
      codecs: [
        { codec: 'PCMU', pt: 0 },
        { codec: 'PCMA', pt: 8 },
      ],
      eventPt: 101,
      direction: 'sendrecv',
    });
    expect(sdp).toContain('m=audio 20000 RTP/AVP 0 8 101');
    expect(sdp).toContain('a=rtpmap:101 telephone-event/8000');
    expect(sdp).toContain('a=fmtp:101 0-16');
    expect(sdp).toContain('c=IN IP4 127.0.0.1');
    expect(sdp).toContain('a=ptime:20');
    expect(sdp).toContain('a=sendrecv');
  });

  it('writes exactly what sdp-transform writes for the same description, offers and answers', () => {
    const descriptions: Parameters<typeof buildSdp>[0][] = [
      {
        address: '10.1.2.3',
        port: 40002,
        sessionId: 2147483646,
        version: 7,
        codecs: [
          { codec: 'PCMA', pt: 8 },
          { codec: 'PCMU', pt: 0 },
        ],
        eventPt: 96,
        direction: 'sendrecv',
      },
      {
        address: '127.0.0.1',
        port: 20000,
        sessionId: 1,
        version: 2,
        codecs: [{ codec: 'PCMU', pt: 112 }],
        eventPt: null,
        direction: 'recvonly',
      },
      {
        address: '192.0.2.1',
        port: 30000,
        sessionId: 5,
        version: 1,
        codecs: [{ codec: 'PCMA', pt: 8 }],
        eventPt: 101,
        direction: 'inactive',
      },
    ];
    for (const d of descriptions) {
      const written = buildSdp(d);
      // What the generic writer makes of the parsed text is the text itself, byte for byte.
      expect(sdpTransform.write(sdpTransform.parse(written))).toBe(written);
      const reference = sdpTransform.write({
        version: 0,
        origin: {
          username: 'switchboard',
          sessionId: d.sessionId,
          sessionVersion: d.version,
          netType: 'IN',
          ipVer: 4,
          address: d.address,
        },
        name: 'switchboard',
        connection: { version: 4, ip: d.address },
        timing: { start: 0, stop: 0 },
        media: [
          {
            type: 'audio',
            port: d.port,
            protocol: 'RTP/AVP',
            payloads: [...d.codecs.map((c) => c.pt), ...(d.eventPt === null ? [] : [d.eventPt])].join(' '),
            rtp: [
              ...d.codecs.map((c) => ({ payload: c.pt, codec: c.codec, rate: 8000 })),
              ...(d.eventPt === null ? [] : [{ payload: d.eventPt, codec: 'telephone-event', rate: 8000 }]),
            ],
            fmtp: d.eventPt === null ? [] : [{ payload: d.eventPt, config: '0-16' }],
            ptime: 20,
            direction: d.direction,
          },
        ],
      });
      expect(written).toBe(reference);
    }
  });

  it("picks the first codec in the offerer's order that we allow, and its telephone-event PT", () => {
    const r = negotiate(
      offer('m=audio 4000 RTP/AVP 18 8 0 96', ['a=rtpmap:18 G729/8000', 'a=rtpmap:96 telephone-event/8000']),
      ['PCMU', 'PCMA'],
    );
    expect(r).toEqual({
      ok: true,
      remote: {
        address: '192.0.2.10',
        port: 4000,
        codec: 'PCMA',
        codecPt: 8,
        eventPt: 96,
        direction: 'sendrecv',
      },
    });
    const only = negotiate(offer('m=audio 4000 RTP/AVP 8 0'), ['PCMU']);
    expect(only.ok && only.remote.codec).toBe('PCMU');
  });

  it('takes a dynamic PT mapped to PCMU, media-level c= and the direction', () => {
    const r = negotiate(
      offer('m=audio 4000 RTP/AVP 97', ['c=IN IP4 198.51.100.1', 'a=rtpmap:97 pcmu/8000', 'a=sendonly'], ''),
      ['PCMU', 'PCMA'],
    );
    expect(r.ok && r.remote).toMatchObject({
      codec: 'PCMU',
      codecPt: 97,
      address: '198.51.100.1',
      direction: 'sendonly',
      eventPt: null,
    });
  });

  it.each([
    ['no common codec', offer('m=audio 4000 RTP/AVP 18 9'), 'no-common-codec'],
    ['SRTP', offer('m=audio 4000 RTP/SAVP 0'), 'no-common-codec'],
    ['no audio', offer('m=video 4000 RTP/AVP 96'), 'bad-sdp'],
    ['rejected stream', offer('m=audio 0 RTP/AVP 0'), 'bad-sdp'],
    ['no connection address', offer('m=audio 4000 RTP/AVP 0', [], ''), 'bad-sdp'],
    ['IPv6 only', offer('m=audio 4000 RTP/AVP 0', [], 'c=IN IP6 ::1'), 'bad-sdp'],
    ['garbage', 'not sdp at all', 'bad-sdp'],
  ])('refuses %s', (_n, sdp, reason) => {
    const r = negotiate(sdp, ['PCMU', 'PCMA']);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toBe(reason);
  });

  it('answers with the mirrored direction (RFC 3264 §6.1)', () => {
    expect(answerDirection('sendonly')).toBe('recvonly');
    expect(answerDirection('recvonly')).toBe('sendonly');
    expect(answerDirection('sendrecv')).toBe('sendrecv');
    expect(answerDirection('inactive')).toBe('inactive');
  });
});
