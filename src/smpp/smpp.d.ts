/**
 * Our own typings for the parts of npm `smpp` 0.5.1 that Switchboard uses (the package ships none).
 * Only src/smpp, ops/lib/smsc.ts (the scriptable SMSC of the tests, the demo and the benchmarks) and
 * ops/bench/sms-raw.ts (the bare-library peer of bench:sms) may import `smpp`.
 * SMPP v3.4 / v5.0 field names are kept as the library spells them (snake_case).
 */
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  /** A decoded short_message: the library splits UDH from text when esm_class has UDHI set. */
  export interface DecodedMessage {
    udh?: Buffer[];
    message: string | Buffer;
  }

  /** Any PDU field; known ones typed, TLVs by name, unknown TLVs by numeric tag as Buffer. */
  export interface PduFields {
    command_status?: number;
    sequence_number?: number;
    system_id?: string;
    password?: string;
    system_type?: string;
    interface_version?: number;
    addr_ton?: number;
    addr_npi?: number;
    address_range?: string;
    service_type?: string;
    source_addr_ton?: number;
    source_addr_npi?: number;
    source_addr?: string;
    dest_addr_ton?: number;
    dest_addr_npi?: number;
    destination_addr?: string;
    esm_class?: number;
    protocol_id?: number;
    priority_flag?: number;
    registered_delivery?: number;
    data_coding?: number;
    short_message?: Buffer | string | DecodedMessage;
    message_id?: string;
    receipted_message_id?: string;
    message_state?: number;
    dest_network_id?: string;
    message_payload?: Buffer | string | DecodedMessage;
    network_error_code?: Buffer;
  }

  export class PDU {
    constructor(command: string, options?: PduFields);
    command: string;
    command_id: number;
    command_status: number;
    command_length: number;
    sequence_number: number;
    system_id?: string;
    password?: string;
    source_addr?: string;
    source_addr_ton?: number;
    source_addr_npi?: number;
    destination_addr?: string;
    dest_addr_ton?: number;
    dest_addr_npi?: number;
    esm_class?: number;
    registered_delivery?: number;
    data_coding?: number;
    short_message?: DecodedMessage | Buffer | string;
    message_payload?: DecodedMessage | Buffer | string;
    message_id?: string;
    receipted_message_id?: string;
    message_state?: number;
    dest_network_id?: string;
    [tag: number]: Buffer | undefined;
    isResponse(): boolean;
    response(options?: PduFields): PDU;
    toBuffer(): Buffer;
  }

  export type ResponseCallback = (pdu: PDU) => void;

  export class Session extends EventEmitter {
    socket: Socket;
    server?: Server;
    sequence: number;
    send(pdu: PDU, responseCallback?: ResponseCallback, sendCallback?: ResponseCallback): boolean;
    pause(): void;
    resume(): void;
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
    bind_transceiver(options: PduFields, cb?: ResponseCallback): boolean;
    bind_transmitter(options: PduFields, cb?: ResponseCallback): boolean;
    bind_receiver(options: PduFields, cb?: ResponseCallback): boolean;
    submit_sm(options: PduFields, cb?: ResponseCallback): boolean;
    deliver_sm(options: PduFields, cb?: ResponseCallback): boolean;
    enquire_link(options?: PduFields | ResponseCallback, cb?: ResponseCallback): boolean;
    unbind(options?: PduFields | ResponseCallback, cb?: ResponseCallback): boolean;
    generic_nack(options?: PduFields): boolean;
    on(event: 'pdu' | string, listener: (pdu: PDU) => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    on(event: 'close' | 'connect', listener: () => void): this;
  }

  export class Server extends NetServer {
    sessions: Session[];
  }

  export interface ConnectOptions {
    host: string;
    port: number;
    tls?: boolean;
    auto_enquire_link_period?: number;
  }

  export function connect(options: ConnectOptions, listener?: () => void): Session;
  export function createServer(listener: (session: Session) => void): Server;
  export function addTLV(tag: string, options: { id: number; type: unknown }): void;

  export const ESME_ROK: number;
  export const ESM_CLASS: {
    readonly MC_DELIVERY_RECEIPT: number;
    readonly UDH_INDICATOR: number;
  };
  export const MESSAGE_STATE: Readonly<Record<string, number>>;

  const smpp: {
    connect: typeof connect;
    createServer: typeof createServer;
    addTLV: typeof addTLV;
    PDU: typeof PDU;
    Session: typeof Session;
    ESME_ROK: number;
    ESM_CLASS: typeof ESM_CLASS;
    MESSAGE_STATE: typeof MESSAGE_STATE;
  };
  export default smpp;
}
