/**
 * The public REST API as the dashboard uses it: Basic auth on every request, the credential held by
 * this closure only (never written to storage), JSON answers. Nothing here is privileged: any client
 * with the same credentials can make the same requests.
 */
export const API_ROOT = '/2012-04-24';

/** A non-2xx answer, with the API's error body message when it has one. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Base64 of UTF-8 (btoa alone throws on characters outside Latin-1). */
function base64(text) {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const enc = encodeURIComponent;

/**
 * A client for one login. `user` is an email address or an AccountSid, `secret` the password or
 * AuthToken (the API accepts either pair).
 */
export function createApi(user, secret) {
  const authorization = `Basic ${base64(`${user}:${secret}`)}`;
  // Calls are account-scoped: remember which account of the caller's tree owns each call.
  const callAccounts = new Map();

  async function request(method, path, form) {
    const headers = { authorization, accept: 'application/json' };
    let body;
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(form).toString();
    }
    const res = await fetch(path, { method, headers, body, cache: 'no-store', credentials: 'omit' });
    const text = await res.text();
    let json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) throw new ApiError(res.status, json?.message ?? `${res.status} ${res.statusText}`);
    return json;
  }

  const api = {
    request,
    /** The logged-in account (the path takes an email address or a sid). */
    account: () => request('GET', `${API_ROOT}/Accounts/${enc(user)}.json`),

    /** Supervisor metrics with the live calls inline; `scope` is 'node' or 'account'. */
    metrics: (accountSid, scope) =>
      request(
        'GET',
        `${API_ROOT}/Accounts/${enc(accountSid)}/Supervisor.json/metrics?LiveCallDetails=true` +
          (scope === 'account' ? '&Scope=account' : ''),
      ),

    /** A single-use ticket for the Supervisor stream (throws when the server has no stream). */
    ticket: (accountSid) =>
      request('POST', `${API_ROOT}/Accounts/${enc(accountSid)}/Supervisor.json/tickets`),

    /**
     * The account owning a call: the logged-in account first, then its sub-accounts (the Super Admin
     * and Administrators may act on calls of their tree, under the owning account's path).
     */
    async accountOfCall(me, callSid, hint) {
      const known = callAccounts.get(callSid) ?? hint;
      const candidates = known ? [known] : [me];
      const tried = new Set();
      const look = async (sid) => {
        tried.add(sid);
        try {
          const call = await request('GET', `${API_ROOT}/Accounts/${enc(sid)}/Calls/${enc(callSid)}.json`);
          return call?.account_sid ?? sid;
        } catch (e) {
          if (e instanceof ApiError && (e.status === 404 || e.status === 403)) return null;
          throw e;
        }
      };
      for (const sid of candidates) {
        const found = await look(sid);
        if (found) return remember(callSid, found);
      }
      const tree = await request('GET', `${API_ROOT}/Accounts.json`);
      const accounts = Array.isArray(tree) ? tree : (tree?.accounts ?? []);
      for (const a of accounts) {
        if (!a?.sid || tried.has(a.sid)) continue;
        const found = await look(a.sid);
        if (found) return remember(callSid, found);
      }
      throw new ApiError(404, `Call ${callSid} not found in this account tree`);
    },

    /** Modify a live call (POST /Calls/{sid}: Status=completed, Mute=true|false or Url=…). */
    async modifyCall(me, callSid, form, hint) {
      const owner = await api.accountOfCall(me, callSid, hint);
      return request('POST', `${API_ROOT}/Accounts/${enc(owner)}/Calls/${enc(callSid)}.json`, form);
    },

    forget: (callSid) => callAccounts.delete(callSid),
  };

  function remember(callSid, accountSid) {
    callAccounts.set(callSid, accountSid);
    return accountSid;
  }

  return api;
}
