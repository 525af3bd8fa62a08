/**
 * What a conference actor does to the world, in domain words: the composition root (the
 * `ConferenceRooms` registry) implements them on the participants' live media handles; machine
 * unit tests give fakes. Commands return nothing and never throw.
 */
export interface ConferenceEffects {
  /** A waiting participant may join the mixer (its `<Dial>` joins the media room). */
  admit(conferenceSid: string, callSid: string): void;
  /** A waiting participant leaves without joining (kicked, or the conference ended): its `<Dial>` ends. */
  dismiss(conferenceSid: string, callSid: string): void;
  /** A participant in the mixer leaves it (kick, end of the conference): its `<Dial>` ends. */
  leave(callSid: string): void;
  /** What the participant says no longer reaches the others (or does again). */
  setMuted(callSid: string, muted: boolean): void;
  /** Hold: neither heard nor hearing the room; `holdUrl` (audio) loops meanwhile, else silence. */
  hold(callSid: string, holdUrl: string | null): void;
  /** Back from hold: hears the room again, heard unless `muted`. */
  unhold(callSid: string, muted: boolean): void;
  /** Plays the audio at `url` once to each of `callSids`. */
  announce(callSids: readonly string[], url: string): void;
}
