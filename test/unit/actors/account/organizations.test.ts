/**
 * The default organization made sure of at start-up, by every node: one that loses the race to
 * create it (nodes starting together on a fresh database) takes the one the other node created.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AccountRecords } from '../../../../src/actors/account/account-records.js';
import { Organizations } from '../../../../src/actors/account/organizations.js';
import { AppError } from '../../../../src/errors.js';
import type { AccountStore, Organization } from '../../../../src/store/account-store.js';

describe('Organizations.ensure', () => {
  it('takes the organization another node created between its look-up and its insert', async () => {
    const theirs: Organization = {
      sid: 'OR0000000000000000000000000000000a',
      domainName: 'default.example.test',
      status: 'active',
      dateCreated: new Date(0),
      dateUpdated: new Date(0),
    };
    const rows = new Map<string, Organization>();
    const store = {
      findOrganization: async (sidOrDomain: string) => rows.get(sidOrDomain) ?? null,
      // The other node's insert lands first: this one hits the unique domain.
      insertOrganization: async (o: Organization) => {
        rows.set(theirs.domainName, theirs);
        throw new AppError('AlreadyExists', `Organization ${o.domainName} already exists`);
      },
    };
    // Only the two organization calls are used by ensure().
    const records = new AccountRecords(store as unknown as AccountStore, {
      bus: null,
      logger: pino({ level: 'silent' }),
      now: Date.now,
    });
    const orgs = new Organizations(records, Date.now);
    expect(await orgs.ensure('default.example.test')).toEqual(theirs);
  });
});
