import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { RTCPeerConnection, RTCRtpCodecParameters, RtpHeader } from 'werift';
import { buildRtp, type RtpPacket } from '../../../../src/media/engine/rtp.js';
import { WebRtcPeer } from '../../../../src/media/engine/webrtc/peer.js';

async function freePort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('WebRTC peer RTP path', () => {
  const closing: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of closing.splice(0)) await c();
  });

  it('carries RTP both ways on the short path once DTLS is up, not through werift', async () => {
    const peer = new WebRtcPeer({
      host: '127.0.0.1',
      port: await freePort(),
      publicAddresses: [],
      codecs: ['PCMU', 'PCMA'],
      order: ['opus', 'PCMU', 'PCMA'],
    });
    closing.push(() => peer.close());
    const got: RtpPacket[] = [];
    peer.onRtp = (p) => got.push(p);

    const far = new RTCPeerConnection({
      codecs: {
        audio: [
          new RTCRtpCodecParameters({
            mimeType: 'audio/opus',
            clockRate: 48000,
            channels: 2,
            payloadType: 111,
          }),
          new RTCRtpCodecParameters({ mimeType: 'audio/PCMU', clockRate: 8000, payloadType: 0 }),
        ],
      },
      headerExtensions: { audio: [] },
      iceServers: [],
      iceUseIpv6: false,
      iceInterfaceAddresses: { udp4: '127.0.0.1' },
    });
    closing.push(() => far.close());
    const t = far.addTransceiver('audio', { direction: 'sendrecv' });
    const farGot: Buffer[] = [];
    t.onTrack.subscribe((track) => track.onReceiveRtp.subscribe((rtp) => farGot.push(rtp.payload)));
    await far.setLocalDescription(await far.createOffer());
    await until(() => far.iceGatheringState === 'complete', 'gathering');
    const answer = await peer.answer(far.localDescription!.sdp);
    if ('error' in answer) throw new Error(answer.error);
    await far.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    await until(() => peer.shortPath && t.dtlsTransport.state === 'connected', 'DTLS and the short path');

    const payload = Buffer.from('an opus frame, as far as this test cares');
    for (let i = 0; i < 5; i++) {
      const h = new RtpHeader({
        payloadType: 111,
        sequenceNumber: (65533 + i) & 0xffff,
        timestamp: i * 960,
        ssrc: t.sender.ssrc,
      });
      await t.dtlsTransport.sendRtp(payload, h);
    }
    await until(() => got.length === 5, 'the far end’s packets');
    expect(got.map((p) => p.sequence)).toEqual([65533, 65534, 65535, 0, 1]);
    expect(got.every((p) => p.payloadType === 111 && Buffer.from(p.payload).equals(payload))).toBe(true);

    const ours = Buffer.from('a frame from the engine');
    for (let i = 0; i < 3; i++) peer.send(buildRtp(answer.media.codecPt!, 10 + i, i * 960, 42, ours));
    await until(() => farGot.length === 3, 'our packets at the far end');
    expect(farGot.every((p) => p.equals(ours))).toBe(true);
  });
});
