/**
 * Single-use tickets for the supervisor stream: a browser cannot put Basic credentials on a
 * WebSocket upgrade, so it trades them (REST, authenticated) for a short-lived ticket it names in the
 * stream URL. Kept in Redis so a ticket issued by one node opens the stream on any node.
 */
export interface StreamTicketStore {
  /** Records `ticket` for the account that asked for it; it is good for `ttlMs`. */
  issue(ticket: string, callerSid: string, ttlMs: number): Promise<void>;
  /** The account the ticket was issued to, once: the ticket is gone afterwards. Null when unknown or expired. */
  redeem(ticket: string): Promise<string | null>;
}
