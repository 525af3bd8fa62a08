import { describe, expect, it } from 'vitest';
import { negotiatedMedia } from '../../../../src/media/engine/webrtc/sdp.js';

// Our answer to Chrome: Opus first, both telephone-event clocks. Chrome's keypad (RTCDTMFSender)
// then sends its events as telephone-event/8000 while Opus carries the audio.
const answer = [
  'v=0',
  'o=- 1 0 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'm=audio 20000 UDP/TLS/RTP/SAVPF 111 0 8 110 126',
  'c=IN IP4 127.0.0.1',
  'a=sendrecv',
  'a=rtpmap:111 opus/48000/2',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:110 telephone-event/48000',
  'a=rtpmap:126 telephone-event/8000',
  '',
].join('\r\n');

describe('negotiatedMedia: telephone-event types', () => {
  it('keeps the rate-matched type and lists every event type of the section', () => {
    const m = negotiatedMedia(answer);
    expect(m?.codec).toBe('opus');
    expect(m?.eventPt).toBe(110);
    expect(m?.eventPts).toEqual([110, 126]);
  });
});
