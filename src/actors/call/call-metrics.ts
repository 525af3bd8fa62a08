/** Call metrics, fed from the call's domain events only (STYLE: one subscriber, no sprinkling). */
import type { CallMeter } from '../../metrics/port.js';
import type { CallObserver } from './call-observers.js';

export function callMetrics(meter: CallMeter): CallObserver {
  return (e) => {
    const direction = e.call.direction;
    switch (e.type) {
      case 'call.created':
        meter.callStarted(direction);
        return;
      case 'call.answered':
        meter.callAnswered(direction, Math.max(0, (e.at - e.call.createdAt) / 1000));
        return;
      case 'call.ended':
        meter.callEnded(direction, e.status, e.duration);
        return;
      case 'verb.finished':
        meter.verbFinished(e.verb, e.outcome);
        return;
      default:
        return;
    }
  };
}
