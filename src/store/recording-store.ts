/** Recordings (spec §Recording): metadata in Postgres, audio in the recording-storage port. */

export interface Recording {
  readonly sid: string;
  readonly accountSid: string;
  readonly callSid: string | null;
  /** Seconds, fractions allowed. */
  readonly duration: number;
  readonly apiVersion: string;
  readonly sizeBytes: number;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export const RECORDING_SORT = ['DateCreated', 'Duration', 'CallSid'] as const;
export type RecordingSort = (typeof RECORDING_SORT)[number];

export interface RecordingFilter {
  readonly accountSid: string;
  readonly callSid?: string | undefined;
  readonly startTime?: Date | undefined;
  readonly endTime?: Date | undefined;
}

export interface RecordingStore {
  insert(r: Recording): Promise<void>;
  get(accountSid: string, sid: string): Promise<Recording | null>;
  /** Any account: the `.wav` URL is public (spec §Authentication 2). */
  getAnyAccount(sid: string): Promise<Recording | null>;
  list(
    filter: RecordingFilter,
    sort: { by: RecordingSort; direction: 'asc' | 'desc' },
    page: { offset: number; limit: number },
  ): Promise<{ total: number; items: Recording[] }>;
  delete(accountSid: string, sid: string): Promise<boolean>;
}
