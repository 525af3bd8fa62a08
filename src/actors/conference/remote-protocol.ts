/**
 * The requests nodes send each other about conferences (node RPC, kind `conference.*`), and the
 * media steps of an inter-node participant's RTP link (make or answer an offer, apply the answer,
 * notice the call's endpoint going), each awaited through the endpoint's media events.
 */

import type { RoomJoin, RoomMedia } from '../interpreter/verbs/conference-join.js';
import { aborted } from '../interpreter/verbs/support.js';
import type { ConferenceEvent } from './conference.types.js';

export type ConferenceRequest =
  /** Seat a call of node `from` in the room: `sdp` is its relay endpoint's offer. */
  | { readonly kind: 'conference.join'; readonly from: string; readonly join: RoomJoin; readonly sdp: string }
  /** The call left (hung up, redirected): its seat on the owner goes. */
  | { readonly kind: 'conference.exit'; readonly callSid: string }
  /** The owner let the participant go (kicked, room ended): its `<Dial>` continues. */
  | { readonly kind: 'conference.left'; readonly callSid: string }
  | { readonly kind: 'conference.get'; readonly accountSid: string; readonly sid: string }
  | {
      readonly kind: 'conference.command';
      readonly accountSid: string;
      readonly sid: string;
      readonly event: ConferenceEvent;
    };

const str = (v: unknown): v is string => typeof v === 'string';

/** Shape check of a request from another node (they share the Redis; a bad frame is refused). */
export function isConferenceRequest(r: unknown): r is ConferenceRequest {
  if (typeof r !== 'object' || r === null) return false;
  const o = r as Record<string, unknown>;
  switch (o.kind) {
    case 'conference.join': {
      const j = o.join as Record<string, unknown> | null;
      return (
        str(o.from) &&
        str(o.sdp) &&
        typeof j === 'object' &&
        j !== null &&
        str(j.callSid) &&
        str(j.accountSid)
      );
    }
    case 'conference.exit':
    case 'conference.left':
      return str(o.callSid);
    case 'conference.get':
      return str(o.accountSid) && str(o.sid);
    case 'conference.command':
      return str(o.accountSid) && str(o.sid) && typeof o.event === 'object' && o.event !== null;
    default:
      return false;
  }
}

export class MediaSteps {
  constructor(private readonly m: RoomMedia) {}

  /** Creates endpoint `id` (an offer, or the answer to `offer`); its SDP, or null when it failed. */
  create(id: string, offer: string | null, signal: AbortSignal): Promise<string | null> {
    return this.until(
      id,
      signal,
      () => this.m.media.createEndpoint(id, offer === null ? {} : { remoteSdp: offer }),
      (e) =>
        e.type === 'media.endpointReady'
          ? e.endpoint.sdp
          : e.type === 'media.endpointFailed'
            ? null
            : undefined,
    );
  }

  /** Applies the far side's answer to `id`; false when it failed. */
  async apply(id: string, answer: string, signal: AbortSignal): Promise<boolean> {
    const applied = await this.until(
      id,
      signal,
      () => this.m.media.applyRemoteSdp(id, answer),
      (e) => (e.type === 'media.sdpApplied' ? true : e.type === 'media.endpointFailed' ? false : undefined),
    );
    return applied === true;
  }

  /**
   * Resolves `gone` when endpoint `id` is lost or released; when `signal` aborts, rejects if
   * `outer` aborted (the verb was stopped), else resolves `gone` (the wait is over anyway).
   */
  lost(id: string, signal: AbortSignal, outer: AbortSignal): Promise<'gone'> {
    return new Promise((resolve, reject) => {
      const off = this.m.mediaEvents.on(id, (e) => {
        if (e.type === 'media.endpointLost' || e.type === 'media.released') {
          off();
          resolve('gone');
        }
      });
      const stop = () => {
        off();
        if (outer.aborted) reject(aborted(outer));
        else resolve('gone');
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
  }

  /** Runs `start` and waits for the first event of `id` that `pick` maps to a value. */
  private until<T>(
    id: string,
    signal: AbortSignal,
    start: () => void,
    pick: (e: Parameters<Parameters<RoomMedia['mediaEvents']['on']>[1]>[0]) => T | undefined,
  ): Promise<T | null> {
    return new Promise<T | null>((resolve, reject) => {
      if (signal.aborted) {
        reject(aborted(signal));
        return;
      }
      const onAbort = () => {
        off();
        this.m.media.release(id);
        reject(aborted(signal));
      };
      const off = this.m.mediaEvents.on(id, (e) => {
        const v = e.type === 'media.released' || e.type === 'media.endpointLost' ? null : pick(e);
        if (v === undefined) return;
        off();
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      });
      signal.addEventListener('abort', onAbort, { once: true });
      start();
    });
  }
}
