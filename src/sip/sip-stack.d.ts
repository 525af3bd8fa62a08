/**
 * Typings for the parts of kirm's `sip` package (npm `sip` 0.0.6) that src/sip uses: its message
 * parser and serializer and its transaction layer (RFC 3261 §17 with UDP timers A/B/E/F/G/H/J/K).
 * Sockets, routing, dialogs, digest and the registrar are ours (see src/sip/README in docs/sip.md).
 * Messages are plain objects with lower-case header names; strings are latin1 ("binary").
 */
declare module 'sip' {
  export interface StackUri {
    schema?: string;
    user?: string;
    password?: string;
    host: string;
    port?: number;
    params: Record<string, string | null>;
    headers: Record<string, string>;
  }
  export interface StackNameAddr {
    name?: string;
    uri: string;
    params: Record<string, string | null>;
  }
  export interface StackRouteEntry {
    name?: string;
    uri: StackUri | string;
    params: Record<string, string | null>;
  }
  export interface StackVia {
    version?: string;
    protocol: string;
    host: string;
    port?: number;
    params: Record<string, string | null>;
  }
  export interface StackAuth {
    scheme?: string;
    [param: string]: string | undefined;
  }
  export interface StackHeaders {
    via: StackVia[];
    to: StackNameAddr;
    from: StackNameAddr;
    'call-id': string;
    cseq: { seq: number; method: string };
    contact?: StackNameAddr[] | '*';
    route?: StackRouteEntry[];
    'record-route'?: StackRouteEntry[];
    /** RFC 3515 §2.1, parsed as a name-addr. */
    'refer-to'?: StackNameAddr;
    'content-length'?: number;
    'max-forwards'?: number | string;
    'www-authenticate'?: StackAuth[];
    'proxy-authenticate'?: StackAuth[];
    authorization?: StackAuth[];
    'proxy-authorization'?: StackAuth[];
    [name: string]: unknown;
  }
  export interface StackMessage {
    method?: string;
    uri?: string | StackUri;
    status?: number;
    reason?: string;
    version?: string;
    headers: StackHeaders;
    content?: string;
  }
  /** A connection the transaction layer sends over. */
  export interface StackConnection {
    send(m: StackMessage): void;
    release(): void;
    protocol: string;
  }
  export interface ClientTransaction {
    message(m: StackMessage, remote?: unknown): void;
    shutdown(): void;
  }
  export interface ServerTransaction {
    send(m: StackMessage): void;
    message(m: StackMessage, remote?: unknown): void;
    shutdown(): void;
  }
  export interface TransactionLayer {
    createServerTransaction(rq: StackMessage, cn: StackConnection): ServerTransaction;
    createClientTransaction(
      cn: StackConnection,
      rq: StackMessage,
      onResponse: (rs: StackMessage) => void,
    ): ClientTransaction;
    getServer(m: StackMessage): ServerTransaction | undefined;
    getClient(m: StackMessage): ClientTransaction | undefined;
    destroy(): void;
  }
  export function makeTransactionLayer(
    options: Record<string, unknown>,
    open: (address: unknown) => StackConnection,
  ): TransactionLayer;
  /** Parses one whole message; undefined when the start line or a header line is unreadable. */
  export function parse(data: string | Buffer): StackMessage | undefined;
  export function stringify(m: StackMessage): string;
  export function stringifyUri(u: StackUri | string): string;
  /** `Digest realm="…",nonce=…`: the parameters as given (quoted or not), in their order. */
  export function stringifyAuthHeader(a: StackAuth): string;
  export function generateBranch(): string;
  export function resolve(
    uri: StackUri,
    action: (addresses: { protocol: string; address: string; port: number }[]) => void,
  ): void;
}
