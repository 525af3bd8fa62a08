import { describe, expect, it } from 'vitest';
import {
  finishCandidates,
  isWebRtcSdp,
  makePassive,
  narrowbandOpus,
  negotiatedMedia,
} from '../../../../src/media/engine/webrtc/sdp.js';

const browserOffer = [
  'v=0',
  'o=- 4611731400430051336 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE 0',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126',
  'c=IN IP4 0.0.0.0',
  'a=ice-ufrag:abcd',
  'a=ice-pwd:0123456789abcdefghijkl',
  'a=fingerprint:sha-256 2E:8F:25:99:E6:13:33:EE:E8:F3:75:1B:D2:68:17:52:D3:7A:C5:AB:F0:ED:08:59:3A:2E:7B:3F:5F:1A:CC:F4',
  'a=setup:actpass',
  'a=mid:0',
  'a=sendrecv',
  'a=rtcp-mux',
  'a=rtpmap:111 opus/48000/2',
  'a=rtpmap:63 red/48000/2',
  'a=rtpmap:9 G722/8000',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:13 CN/8000',
  'a=rtpmap:110 telephone-event/48000',
  'a=rtpmap:126 telephone-event/8000',
  '',
].join('\r\n');

describe('WebRTC SDP', () => {
  it('tells a browser offer from plain RTP/AVP and from SAVPF without DTLS', () => {
    expect(isWebRtcSdp(browserOffer)).toBe(true);
    expect(isWebRtcSdp(browserOffer.replace('UDP/TLS/RTP/SAVPF', 'RTP/AVP'))).toBe(false);
    expect(isWebRtcSdp(browserOffer.replace('UDP/TLS/RTP/SAVPF', 'udp/tls/rtp/savpf'))).toBe(true);
    expect(isWebRtcSdp(browserOffer.replace(/a=fingerprint:.*\r\n/, ''))).toBe(false);
    expect(isWebRtcSdp(browserOffer.replace(/a=ice-pwd:.*\r\n/, ''))).toBe(false);
    expect(isWebRtcSdp('garbage')).toBe(false);
  });

  it('marks Opus narrowband, keeping the other parameters and adding an fmtp line where there is none', () => {
    expect(narrowbandOpus(browserOffer)).toContain(
      'a=rtpmap:111 opus/48000/2\r\na=fmtp:111 maxplaybackrate=8000;sprop-maxcapturerate=8000\r\na=rtpmap:63 ',
    );
    const withFmtp = browserOffer.replace(
      'a=rtpmap:111 opus/48000/2\r\n',
      'a=rtpmap:111 opus/48000/2\r\na=fmtp:111 minptime=10;maxplaybackrate=48000;useinbandfec=1\r\n',
    );
    const marked = narrowbandOpus(withFmtp);
    expect(marked).toContain(
      'a=fmtp:111 minptime=10;useinbandfec=1;maxplaybackrate=8000;sprop-maxcapturerate=8000\r\n',
    );
    expect(marked.split('\r\n').length).toBe(withFmtp.split('\r\n').length);
    expect(narrowbandOpus(marked)).toBe(marked);
    // Other codecs' parameters are left alone.
    expect(narrowbandOpus('a=rtpmap:0 PCMU/8000\na=fmtp:0 maxplaybackrate=48000\n')).toContain(
      'a=fmtp:0 maxplaybackrate=48000',
    );
  });

  it('answers DTLS passive', () => {
    expect(makePassive('a=setup:active\r\na=mid:0\r\n')).toBe('a=setup:passive\r\na=mid:0\r\n');
  });

  it('keeps the bound host candidate, adds public ones with its port, and sets the default candidate', () => {
    const local = [
      'v=0',
      'm=audio 9 UDP/TLS/RTP/SAVPF 111',
      'c=IN IP4 0.0.0.0',
      'a=candidate:1 1 udp 2116026367 10.0.0.5 40000 typ host generation 0',
      'a=candidate:2 1 udp 2116026367 192.0.2.2 40001 typ host generation 0',
      'a=end-of-candidates',
      'a=ice-options:trickle',
      'a=ice-lite',
      '',
    ].join('\r\n');
    const { sdp, port } = finishCandidates(local, { host: '10.0.0.5', publicAddresses: ['203.0.113.7'] });
    expect(port).toBe(40000);
    expect(sdp).toContain('m=audio 40000 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 203.0.113.7\r\n');
    expect(sdp).toContain('a=candidate:1 1 udp 2116026367 10.0.0.5 40000 typ host');
    expect(sdp).toMatch(/a=candidate:1p0 1 udp \d+ 203\.0\.113\.7 40000 typ host/);
    expect(sdp).not.toContain('192.0.2.2');
    expect(sdp).not.toContain('trickle');
    expect(sdp.match(/a=end-of-candidates/g)).toHaveLength(1);
  });

  it('reads Opus first with the 48 kHz telephone-event, or G.711 with the 8 kHz one', () => {
    const opus = negotiatedMedia(browserOffer);
    expect(opus).toMatchObject({ codec: 'opus', codecPt: 111, eventPt: 110, direction: 'sendrecv' });
    expect([...opus!.decodable.keys()]).toEqual([111, 0, 8]);
    const pcmu = negotiatedMedia(browserOffer.replace('111 63 9 0 8', '0 8'));
    expect(pcmu).toMatchObject({ codec: 'PCMU', codecPt: 0, eventPt: 126 });
    expect(negotiatedMedia(browserOffer.replace('111 63 9 0 8 13', '9 13'))).toBeNull();
  });
});
