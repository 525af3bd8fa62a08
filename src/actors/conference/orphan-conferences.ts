/**
 * Conferences whose owner node died: the first node to notice (one with a participant in the room,
 * or any node's sweep of the conferences whose location ran out) ends each one, once (its end
 * mark): the record completed (`node-stopped`) and its `conference-end` callback sent in the shape
 * the owner would have sent it, numbered after the owner's last event.
 */
import type { Logger } from '../../logger.js';
import type { ConferenceOwnerStore } from '../../store/conference-owner-store.js';
import { ConferenceEndReason } from '../../store/conference-store.js';
import { conferenceCallbackParams, type SendConferenceCallback } from './conference-observers.js';

/** How many conferences a sweep ends at most per round. */
const SWEEP_BATCH = 100;

export interface OrphanConferencesDeps {
  readonly owners: ConferenceOwnerStore;
  /** Completes the record of a conference whose owner died (called at most once per conference). */
  readonly completeRecord: (sid: string, at: Date) => Promise<void>;
  /** Sends the `conference-end` callback of a conference whose owner died. */
  readonly sendCallback: SendConferenceCallback;
  readonly logger: Logger;
}

export class OrphanConferences {
  /** A sweep is running: a slow one (a loaded node) is not overlapped by the next round. */
  private sweeping = false;

  constructor(private readonly d: OrphanConferencesDeps) {}

  /** Ends the conferences whose owner stopped renewing their location, except this node's own. */
  async sweep(mine: ReadonlySet<string>): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      for (const sid of await this.d.owners.expired(Date.now(), SWEEP_BATCH)) {
        // Ours (a renewal came late), or renewed meanwhile: still live.
        if (mine.has(sid) || (await this.d.owners.whereIs(sid))) continue;
        await this.end(sid);
      }
    } catch (err) {
      this.d.logger.warn({ err }, 'conferences of dead nodes not swept');
    } finally {
      this.sweeping = false;
    }
  }

  /**
   * Ends conference `sid` whose owner died, if no node (nor the owner) has yet. The node that
   * marks the end reads the owner's note and forgets the conference; any other only drops it from
   * the live list, never the note the ender may still be reading.
   */
  async end(sid: string): Promise<void> {
    if (!(await this.d.owners.markEnded(sid))) {
      await this.d.owners.unlist(sid);
      return;
    }
    const at = Date.now();
    this.d.logger.warn({ conferenceSid: sid }, 'conference of a node that died: ended');
    await this.d.completeRecord(sid, new Date(at));
    const ending = await this.d.owners.endingOf(sid);
    const cb = ending?.statusCallback;
    if (ending && cb?.events.includes('end') && (cb.method === 'GET' || cb.method === 'POST')) {
      const params = conferenceCallbackParams(
        {
          sid,
          accountSid: ending.accountSid,
          friendlyName: ending.friendlyName,
          endReason: ConferenceEndReason.NodeStopped,
          callSidEnding: null,
        },
        'conference-end',
        ending.sequence + 1,
        at,
        null,
      );
      await this.d
        .sendCallback(ending.accountSid, sid, cb.url, cb.method, params)
        .catch((err) =>
          this.d.logger.warn({ err, conferenceSid: sid }, 'conference status callback not sent'),
        );
    }
    await this.d.owners.forget(sid);
  }
}
