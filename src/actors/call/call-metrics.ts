/** Call metrics, fed from the call's domain events only (STYLE: one subscriber, no sprinkling). */
import type { CallMeter } from '../../metrics/port.js';
import type { CallObserver } from './call-observers.js';

export function callMetrics(meter: CallMeter): CallObserver {
  /** Calls started on this node: only they count in the live gauge. */
  const live = new Set<string>();
  return (e) => {
    const direction = e.call.origin.direction;
    switch (e.type) {
      case 'call.created':
        live.add(e.call.origin.sid);
        meter.callStarted(direction);
        return;
      case 'call.answered':
        meter.callAnswered(direction, Math.max(0, (e.at - e.call.origin.createdAt) / 1000));
        return;
      case 'call.ended':
        meter.callEnded(direction, e.status, e.duration, live.delete(e.call.origin.sid));
        return;
      case 'verb.finished':
        meter.verbFinished(e.verb, e.outcome);
        return;
      default:
        return;
    }
  };
}
