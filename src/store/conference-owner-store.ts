/**
 * Who runs a conference room in a cluster: one owner node per room (account + friendly name),
 * claimed under a lease the owner renews while the room lives. Participants whose calls run on
 * other nodes join the room on its owner (docs/cluster.md, "Conferences across nodes").
 */
/**
 * What a node other than the owner needs to end a conference whose owner died: its names, where
 * its status callbacks go, and how many events the owner had numbered (the end's sequence follows).
 */
export interface ConferenceEnding {
  readonly sid: string;
  readonly accountSid: string;
  readonly friendlyName: string;
  readonly statusCallback: {
    readonly url: string;
    readonly method: string;
    readonly events: readonly string[];
  } | null;
  /** The SequenceNumber of the owner's last event of the conference. */
  readonly sequence: number;
}

export interface ConferenceOwnerStore {
  /**
   * Claims `room` for `node` for `ttlMs` (or extends the claim when `node` holds it). Returns the
   * holder afterwards: `node` when it won or kept the room, the other node otherwise.
   */
  claim(room: string, node: string, ttlMs: number): Promise<string>;
  /** The room's holder, or null when nobody holds it (never claimed, released, or run out). */
  ownerOf(room: string): Promise<string | null>;
  /** Gives the room up if `node` holds it (its conference completed). */
  release(room: string, node: string): Promise<void>;
  /**
   * Publishes which node runs conference `sid` (REST on other nodes forwards there), for `ttlMs`;
   * `expired` lists it once that runs out without a renewal.
   */
  locate(sid: string, node: string, room: string, ttlMs: number): Promise<void>;
  /** The node that runs conference `sid` and its room, while `locate` keeps it published. */
  whereIs(sid: string): Promise<{ readonly node: string; readonly room: string } | null>;
  /**
   * Marks conference `sid` ended; true for the first caller only, so its record is completed once
   * whichever node (the owner, or a survivor after the owner died) gets there first.
   */
  markEnded(sid: string): Promise<boolean>;
  /** Keeps what a survivor needs to end conference `ending.sid` (replaced at each of its events). */
  noteEnding(ending: ConferenceEnding): Promise<void>;
  /** The last `noteEnding` of conference `sid`, or null. */
  endingOf(sid: string): Promise<ConferenceEnding | null>;
  /** Up to `limit` conferences whose location ran out before `now` (epoch ms) without being forgotten. */
  expired(now: number, limit: number): Promise<string[]>;
  /**
   * Drops conference `sid` from the live list and its ending note: by the node that ended it (the
   * one whose `markEnded` won), once it no longer needs the note.
   */
  forget(sid: string): Promise<void>;
  /**
   * Drops conference `sid` from the live list only: by a node that found it already ended by
   * another, which may still be reading the note to send the `conference-end`.
   */
  unlist(sid: string): Promise<void>;
}
