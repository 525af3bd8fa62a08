/** Why a play source could not be loaded; `reason` is the `media.playFailed` reason (data, not text). */
export type PlayFailure =
  | 'fetch-failed'
  | 'not-audio'
  | 'too-large'
  | 'tts-failed'
  | 'no-such-file'
  | 'bad-digits';

/** A play source failed to load. */
export class PlayError extends Error {
  constructor(
    readonly reason: PlayFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PlayError';
  }
}
