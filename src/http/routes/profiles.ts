/**
 * Profiles (spec §Endpoints › Profiles; JSON only). Every status of the spec's Errors table for
 * profiles. The multi-provider extension's configuration is extensions.ts's.
 */
import type { Request, Response } from 'express';
import type { AccountService } from '../../actors/account/account-service.js';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import { jsonPointer } from '../../json-members.js';
import { ConfigurationDataError, validateMultiProvider } from '../../profiles/multi-provider.js';
import { kindFromContentType, SCHEMAS, schemaNameOf, validateProfile } from '../../profiles/schemas.js';
import { type Account, Role } from '../../store/account-store.js';
import { DEFAULT_PROFILE_SID } from '../../store/profile-defaults.js';
import type { Profile, ProfileStore } from '../../store/profile-store.js';
import { callerOf } from '../context.js';
import { jsonDocument, type RouteSpec } from '../openapi/spec.js';
import { writeJson } from '../render.js';
import type { RouteTable } from '../router.js';
import { API_ROOT } from '../uris.js';

export interface ProfileRouteDeps {
  readonly profiles: ProfileStore;
  readonly accounts: AccountService;
  readonly publicUrl: string;
}

export function profileRoutes(routes: RouteTable, deps: ProfileRouteDeps): void {
  const base = `${API_ROOT}/Profiles`;
  const schemaUrl = (p: Profile) => `${deps.publicUrl}${base}/schemas/${schemaNameOf(p.kind)}`;

  const linkedTo = async (p: Profile, caller: Account) => {
    const targets = await deps.profiles.linkedTargets(p.sid);
    return targets.includes(caller.sid) || targets.includes(caller.organizationSid);
  };

  /**
   * Whether the caller owns a subscriber profile: it is the creator account or one of its ancestors
   * (the creator's account tree), or the Super Admin. A subscriber profile holds trunk credentials
   * and routes calls, so being linked to it or having its creator in scope is not enough.
   */
  const owns = async (caller: Account, p: Profile) => {
    if (caller.isSuperAdmin) return true;
    if (p.kind !== 'subscriber' || !p.ownerAccountSid) return false;
    if (p.ownerAccountSid === caller.sid) return true;
    const creator = await deps.accounts.get(p.ownerAccountSid);
    return creator !== null && (await deps.accounts.isSelfOrDescendant(creator, caller.sid));
  };

  /** Spec §Authentication 5: platform profiles are read where linked; subscriber ones by their owners. */
  const canRead = async (caller: Account, p: Profile) =>
    p.sid === DEFAULT_PROFILE_SID ||
    (await owns(caller, p)) ||
    (p.kind === 'platform' && (await linkedTo(p, caller)));

  /** 403 unless the caller may change, link or unlink the profile: the Super Admin, or an administrator owning it. */
  const assertCanModify = async (caller: Account, p: Profile) => {
    if (p.sid === DEFAULT_PROFILE_SID)
      throw new AppError('Forbidden', 'The default profile cannot be modified or deleted');
    if (caller.isSuperAdmin) return;
    if (p.kind === 'platform')
      throw new AppError('Forbidden', 'Only the Super Admin manages platform profiles');
    if (caller.role !== Role.Administrator || !(await owns(caller, p))) {
      throw new AppError(
        'Forbidden',
        "Only an administrator of the profile creator's account tree manages this subscriber profile",
      );
    }
  };

  const find = async (req: Request) => {
    const p = await deps.profiles.get(req.params.profileSid as string);
    if (!p) throw new AppError('NotFound', `Profile ${req.params.profileSid} not found`);
    return p;
  };

  const documentOf = (req: Request, kind: Profile['kind']) => {
    const doc: unknown = req.body;
    if (doc === undefined || typeof doc !== 'object' || doc === null) {
      throw new AppError('InvalidParameter', 'The profile document must be a JSON object');
    }
    const problem = validateProfile(kind, doc);
    if (problem)
      throw new AppError(
        'InvalidParameter',
        `Profile does not comply with ${schemaNameOf(kind)}: ${problem}`,
      );
    // The same checks as the extension's ConfigurationData (patterns included), so a stored
    // multiprovider member is one that resolution will use.
    const multiprovider = (doc as { multiprovider?: unknown }).multiprovider;
    if (kind === 'subscriber' && multiprovider !== undefined) {
      try {
        validateMultiProvider(multiprovider, ['multiprovider']);
      } catch (e) {
        if (!(e instanceof ConfigurationDataError)) throw e;
        throw new AppError(
          'InvalidParameter',
          `Profile does not comply with ${schemaNameOf(kind)}: ${jsonPointer(e.path)} ${e.problem}`,
        );
      }
    }
    return doc;
  };

  const kindOf = (req: Request) => {
    const kind = kindFromContentType(req.headers['content-type']);
    if (!kind) {
      throw new AppError(
        'InvalidParameter',
        `Content-Type must be application/instance+json;schema=${deps.publicUrl}${base}/schemas/(rc-profile-schema.json|rc-subscriber-schema.json)`,
      );
    }
    return kind;
  };

  /** LINK / UNLINK: exactly one Link header value with rel=related naming an account or organization URL. */
  const linkTarget = async (req: Request): Promise<string> => {
    const values = (req.headersDistinct.link ?? []).flatMap((v) => v.split(/,(?=\s*<)/));
    if (values.length !== 1) throw new AppError('InvalidParameter', 'Exactly one Link header is required');
    const m = /^\s*<([^>]+)>\s*;\s*rel="?([^";]+)"?\s*$/i.exec(values[0] as string);
    if (!m || (m[2] as string).toLowerCase() !== 'related') {
      throw new AppError('InvalidParameter', 'The Link header must be <url>;rel=related');
    }
    const t = /\/2012-04-24\/(Accounts|Organizations)\/([^/?.]+)(?:\.json)?\/?(?:\?.*)?$/.exec(
      m[1] as string,
    );
    if (!t) throw new AppError('InvalidParameter', 'The Link URL must name an account or an organization');
    let sid: string;
    try {
      sid = decodeURIComponent(t[2] as string);
    } catch {
      throw new AppError('InvalidParameter', 'The Link URL has a malformed percent-encoding');
    }
    if (t[1] === 'Accounts') {
      const account = await deps.accounts.resolve(sid);
      if (!account) throw new AppError('NotFound', `Account ${sid} not found`);
      return account.sid;
    }
    const org = await deps.accounts.getOrganization(sid);
    if (!org) throw new AppError('NotFound', `Organization ${sid} not found`);
    return org.sid;
  };

  const linkOrUnlink = async (req: Request, res: Response, op: 'LINK' | 'UNLINK') => {
    const caller = callerOf(res);
    const p = await find(req);
    const target = await linkTarget(req);
    if (!caller.isSuperAdmin) {
      // The profile must be the caller's to use, and the entity within its scope.
      await assertCanModify(caller, p);
      const account = target.startsWith('AC') ? await deps.accounts.get(target) : null;
      if (!account || !(await deps.accounts.inScope(caller, account)))
        throw new AppError('Forbidden', 'Not allowed to link this profile to that entity');
    }
    if (op === 'LINK') await deps.profiles.link(p.sid, target);
    else if (!(await deps.profiles.unlink(p.sid, target))) {
      throw new AppError('NotFound', `Profile ${p.sid} is not linked to ${target}`);
    }
    writeJson(res, { sid: p.sid, link: target, operation: op });
  };

  routes.resource(base, {
    GET: async (_req, res) => {
      const caller = callerOf(res);
      const all = await deps.profiles.list();
      const visible = [];
      for (const p of all) if (await canRead(caller, p)) visible.push(p);
      writeJson(
        res,
        visible.map((p) => ({
          uri: `${base}/${p.sid}`,
          sid: p.sid,
          dateUpdated: p.dateUpdated.getTime(),
          dateCreated: p.dateCreated.getTime(),
        })),
      );
    },
    POST: async (req, res) => {
      const caller = callerOf(res);
      const kind = kindOf(req);
      if (kind === 'platform' && !caller.isSuperAdmin)
        throw new AppError('Forbidden', 'Only the Super Admin creates platform profiles');
      if (kind === 'subscriber' && caller.role !== Role.Administrator) {
        throw new AppError('Forbidden', 'Only an account administrator creates subscriber profiles');
      }
      const document = documentOf(req, kind);
      const at = new Date();
      const p: Profile = {
        sid: newSid(SidPrefix.Profile),
        kind,
        document,
        ownerAccountSid: kind === 'subscriber' ? caller.sid : null,
        dateCreated: at,
        dateUpdated: at,
      };
      // Spec: the subscriber kind creates profiles linked only to the creating account.
      await deps.profiles.insert(p, kind === 'subscriber' ? caller.sid : undefined);
      res.setHeader('Location', `${deps.publicUrl}${base}/${p.sid}`);
      writeJson(res, document, 201);
    },
  });

  routes.resource(`${base}/schemas/:schemaName`, {
    GET: async (req, res) => {
      const schema = SCHEMAS[`${String(req.params.schemaName).replace(/\.json$/, '')}.json`];
      if (!schema) throw new AppError('NotFound', `No schema ${req.params.schemaName}`);
      writeJson(res, schema);
    },
  });

  routes.resource(`${base}/:profileSid`, {
    GET: async (req, res) => {
      const p = await find(req);
      if (!(await canRead(callerOf(res), p)))
        throw new AppError('Forbidden', 'Not allowed to read this profile');
      res.setHeader('Link', `<${schemaUrl(p)}>; rel="describedBy"`);
      res.setHeader('Last-Modified', p.dateUpdated.toUTCString());
      writeJson(res, p.document);
    },
    PUT: async (req, res) => {
      const override = String(req.headers['x-http-method-override'] ?? '').toUpperCase();
      if (override === 'LINK' || override === 'UNLINK') return linkOrUnlink(req, res, override);
      if (override !== '')
        throw new AppError('InvalidParameter', 'X-HTTP-Method-Override must be LINK or UNLINK');
      const p = await find(req);
      await assertCanModify(callerOf(res), p);
      const updated = await deps.profiles.update(p.sid, documentOf(req, p.kind));
      writeJson(res, updated?.document);
    },
    DELETE: async (req, res) => {
      const p = await find(req);
      await assertCanModify(callerOf(res), p);
      await deps.profiles.delete(p.sid); // links go with it (ON DELETE CASCADE)
      writeJson(res, { sid: p.sid, deleted: true });
    },
  });

  routes.describe(base, PROFILES_SPEC);
  routes.describe(`${base}/schemas/:schemaName`, PROFILE_SCHEMA_SPEC);
  routes.describe(`${base}/:profileSid`, PROFILE_SPEC);
}

// The profile API is JSON only (no `.json` suffix); its documents are the caller's own JSON.
const PROFILES_SPEC: RouteSpec = {
  tag: 'Profiles',
  jsonOnly: true,
  GET: { summary: 'List profiles', response: jsonDocument() },
  POST: {
    summary: 'Create a profile',
    description: 'The Content-Type names the kind (platform or subscriber profile schema).',
    jsonBody: true,
    response: jsonDocument(201),
  },
};

const PROFILE_SCHEMA_SPEC: RouteSpec = {
  tag: 'Profiles',
  jsonOnly: true,
  GET: { summary: 'Get a profile JSON schema', response: jsonDocument() },
};

const PROFILE_SPEC: RouteSpec = {
  tag: 'Profiles',
  jsonOnly: true,
  GET: { summary: 'Get a profile', response: jsonDocument() },
  PUT: {
    summary: 'Replace a profile',
    description: '`X-HTTP-Method-Override: LINK` or `UNLINK` links or unlinks the profile instead.',
    jsonBody: true,
    response: jsonDocument(),
  },
  DELETE: { summary: 'Delete a profile', response: jsonDocument() },
};
