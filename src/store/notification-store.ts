/** Notifications (spec §Notification): the service's log entries about calls and API use. */

export interface Notification {
  readonly sid: string;
  readonly accountSid: string;
  readonly callSid: string | null;
  readonly apiVersion: string | null;
  /** 0 error, 1 warning. */
  readonly log: 0 | 1;
  readonly errorCode: number;
  readonly moreInfo: string;
  readonly messageText: string;
  readonly messageDate: Date;
  readonly requestUrl: string | null;
  readonly requestMethod: string | null;
  readonly requestVariables: string | null;
  readonly responseHeaders: string | null;
  readonly responseBody: string | null;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export const NOTIFICATION_SORT = ['DateCreated', 'Log', 'ErrorCode', 'CallSid', 'MessageText'] as const;
export type NotificationSort = (typeof NOTIFICATION_SORT)[number];

export interface NotificationFilter {
  readonly accountSid: string;
  readonly callSid?: string | undefined;
  readonly startTime?: Date | undefined;
  readonly endTime?: Date | undefined;
  readonly errorCode?: number | undefined;
  readonly requestUrl?: string | undefined;
  readonly messageText?: string | undefined;
}

export interface SortOrder<K extends string> {
  readonly by: K;
  readonly direction: 'asc' | 'desc';
}

export interface NotificationStore {
  insert(n: Notification): Promise<void>;
  get(accountSid: string, sid: string): Promise<Notification | null>;
  list(
    filter: NotificationFilter,
    sort: SortOrder<NotificationSort>,
    page: { offset: number; limit: number },
    cap: number,
  ): Promise<{ total: number; items: Notification[] }>;
}
