import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Connections } from '../../../../src/media/engine/connections.js';
import { Endpoint } from '../../../../src/media/engine/endpoint.js';
import { encodeG711 } from '../../../../src/media/engine/g711.js';
import type { Operations } from '../../../../src/media/engine/operations.js';
import { tone } from '../../../../src/media/engine/pcm.js';
import type { PlayOp } from '../../../../src/media/engine/running-ops.js';
import { FrameTick } from '../../../../src/media/engine/tick.js';
import { OpusCodec } from '../../../../src/media/engine/webrtc/opus.js';
import { MAX_PROMPT_FRAMES, promptFrames } from '../../../../src/media/engine/webrtc/prompt-frames.js';
import { WebRtcEndpoint } from '../../../../src/media/engine/webrtc/webrtc-endpoint.js';
import { rmsOf, tonePower } from '../../../integration/media/helpers.js';

const noop = (): void => {};

function play(pcm: Int16Array, loops = 1): PlayOp {
  return { opId: 'op', interruptOnDtmf: false, internal: false, pcm, pos: 0, loopsLeft: loops };
}

function tickOver(endpoints: Endpoint[]): FrameTick {
  const ops = {
    endPlay: (ep: Endpoint) => {
      ep.play = null;
    },
    endRecord: noop,
    endCollect: noop,
  } as unknown as Operations;
  const connections = { rooms: new Map() } as unknown as Connections;
  return new FrameTick(new Map(endpoints.map((ep) => [ep.id, ep])), ops, connections);
}

/** A WebRTC leg already keyed, whose packets (RTP before SRTP) are kept. */
function webrtcLeg(
  id: string,
  codec: 'opus' | 'PCMU' = 'opus',
): { ep: WebRtcEndpoint; payloads: Uint8Array[] } {
  const ep = new WebRtcEndpoint(id, '127.0.0.1', 0, ['PCMU'], noop, noop);
  const payloads: Uint8Array[] = [];
  ep.link = { connected: true, send: (p) => payloads.push(Uint8Array.from(p.subarray(12))), close: noop };
  ep.setMedia({
    codec,
    codecPt: codec === 'opus' ? 111 : 0,
    eventPt: null,
    decodable: new Map([[codec === 'opus' ? 111 : 0, codec]]),
    direction: 'sendrecv',
  });
  return { ep, payloads };
}

/** Records the prompt reference each send carries (copied: the tick reuses the object). */
class Probe extends Endpoint {
  readonly refs: ({ pcm: Int16Array; index: number } | null)[] = [];
  constructor() {
    super('probe', null, '127.0.0.1', 0, ['PCMU'], noop);
  }
  override send(
    _pcm: Int16Array | null,
    _silence: Int16Array,
    prompt?: { pcm: Int16Array; index: number },
  ): void {
    this.refs.push(prompt ? { pcm: prompt.pcm, index: prompt.index } : null);
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('shared Opus frames of a prompt', () => {
  it('decode to the prompt', () => {
    const pcm = tone(440, 1000, 6000);
    const frames = promptFrames(pcm)!;
    const dec = new OpusCodec();
    const heard = new Int16Array(pcm.length);
    for (let f = 0; f * 160 < pcm.length; f++) heard.set(dec.decode(frames.frame(f)!), f * 160);
    dec.close();
    const steady = heard.subarray(1600);
    expect(rmsOf(steady)).toBeGreaterThan(3000);
    expect(tonePower(steady, 440)).toBeGreaterThan(50 * tonePower(steady, 1500));
    expect(frames.encoded).toBe(pcm.length / 160);
  });

  it('are encoded once for two legs playing the same prompt, and the legs send the same packets', () => {
    const pcm = tone(440, 400, 6000);
    const a = webrtcLeg('a');
    const b = webrtcLeg('b');
    a.ep.play = play(pcm);
    b.ep.play = play(pcm);
    const encode = vi.spyOn(OpusCodec.prototype, 'encode');
    const tick = tickOver([a.ep, b.ep]);
    for (let i = 0; i < 20; i++) tick.run(0);
    expect(a.payloads.length).toBe(20);
    expect(b.payloads).toEqual(a.payloads);
    expect(encode).toHaveBeenCalledTimes(20);
    expect(promptFrames(pcm)!.encoded).toBe(20);
  });

  it("loop back to the first pass's frames", () => {
    const pcm = tone(440, 100, 6000);
    const a = webrtcLeg('a');
    a.ep.play = play(pcm, 3);
    const encode = vi.spyOn(OpusCodec.prototype, 'encode');
    const tick = tickOver([a.ep]);
    for (let i = 0; i < 15; i++) tick.run(0);
    expect(encode).toHaveBeenCalledTimes(5);
    expect(a.payloads.slice(5, 10)).toEqual(a.payloads.slice(0, 5));
  });

  it('are not used for a beep, a padded last frame or a frame across a loop boundary', () => {
    // 3 whole frames and a half: frame 3 is padded with zeros.
    const p = new Probe();
    const pcm = tone(440, 70, 6000);
    p.play = play(pcm);
    const tick = tickOver([p]);
    for (let i = 0; i < 4; i++) tick.run(0);
    expect(p.refs).toEqual([{ pcm, index: 0 }, { pcm, index: 1 }, { pcm, index: 2 }, null]);

    // 1.5 frames looped: frame 2 wraps inside, frame 3 starts half-way into one.
    const q = new Probe();
    const short = tone(440, 30, 6000);
    q.play = play(short, 3);
    const tick2 = tickOver([q]);
    for (let i = 0; i < 3; i++) tick2.run(0);
    expect(q.refs).toEqual([{ pcm: short, index: 0 }, null, null]);

    // A beep overrides the play (which waits).
    const r = new Probe();
    r.play = play(pcm);
    r.beep = { pcm: tone(1000, 40, 6000), pos: 0, onDone: noop };
    const tick3 = tickOver([r]);
    for (let i = 0; i < 3; i++) tick3.run(0);
    expect(r.refs).toEqual([null, null, { pcm, index: 0 }]);
  });

  it('are not kept for prompts too long or shorter than a frame', () => {
    expect(promptFrames(new Int16Array(100))).toBeNull();
    expect(promptFrames(new Int16Array((MAX_PROMPT_FRAMES + 1) * 160))).toBeNull();
    const a = webrtcLeg('a');
    const long = new Int16Array((MAX_PROMPT_FRAMES + 1) * 160).fill(1000);
    a.ep.play = play(long);
    const encode = vi.spyOn(OpusCodec.prototype, 'encode');
    tickOver([a.ep]).run(0);
    expect(encode).toHaveBeenCalledTimes(1);
    expect(a.payloads.length).toBe(1);
  });

  it('leave a G.711 WebRTC leg encoding its own frames', () => {
    const pcm = tone(440, 100, 6000);
    const a = webrtcLeg('a', 'PCMU');
    a.ep.play = play(pcm);
    const encode = vi.spyOn(OpusCodec.prototype, 'encode');
    tickOver([a.ep]).run(0);
    expect(encode).not.toHaveBeenCalled();
    const expected = new Uint8Array(160);
    encodeG711('PCMU', pcm.subarray(0, 160), expected);
    expect(a.payloads).toEqual([expected]);
  });
});
