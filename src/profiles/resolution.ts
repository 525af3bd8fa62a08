/**
 * Profile resolution (spec §Profile): the profile linked to the account, else to its parent, else to
 * its organization, else the default profile. And the multi-provider configuration in effect for an
 * account: its enabled `multi_provider` extension configuration (set by the Super Admin) wins; else the
 * `multiprovider` member of its effective subscriber profile; else none.
 */
import type { Account } from '../store/account-store.js';
import { DEFAULT_PROFILE_SID } from '../store/profile-defaults.js';
import type { MultiProviderConfig, ProfileStore } from '../store/profile-store.js';
import { validateMultiProvider } from './multi-provider.js';

export const MULTI_PROVIDER = 'multi_provider';

/** What resolution needs of the accounts: one by sid. */
export interface AccountLookup {
  get(sid: string): Promise<Account | null>;
}

export class ProfileResolver {
  constructor(
    private readonly profiles: ProfileStore,
    private readonly accounts: AccountLookup,
  ) {}

  async effectiveProfileSid(account: Account): Promise<string> {
    const chain = [account.sid];
    if (account.parentSid) chain.push(account.parentSid);
    chain.push(account.organizationSid);
    return (await this.profiles.firstLinked(chain)) ?? DEFAULT_PROFILE_SID;
  }

  async effectiveMultiProvider(accountSid: string): Promise<MultiProviderConfig | null> {
    const ext = await this.profiles.extensionOf(accountSid, MULTI_PROVIDER);
    if (ext?.enabled) return ext.configurationData;
    const account = await this.accounts.get(accountSid);
    if (!account) return null;
    const profile = await this.profiles.get(await this.effectiveProfileSid(account));
    const member = (profile?.document as { multiprovider?: unknown } | null)?.multiprovider;
    if (member === undefined) return null;
    try {
      return validateMultiProvider(member, ['multiprovider']);
    } catch {
      return null;
    }
  }
}
