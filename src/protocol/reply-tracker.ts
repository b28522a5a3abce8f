/**
 * Knows where a command's reply ends. Fed the reply's packets one by one, it follows the shape
 * the command implies — a single OK/ERR, result sets (text or binary, several when the
 * more-results flag says so), a LOCAL INFILE exchange, a prepare reply, cursor fetches, or an
 * authentication exchange — and says when the last packet has passed.
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response.html
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_prepare.html
 * @see https://mariadb.com/kb/en/result-set-packets/
 */
import { Command, MAX_PACKET_PAYLOAD, PacketHeader, ServerStatus } from './constants.ts';
import type { FramedPacket } from './packet-framer.ts';
import { readStatus, statusOffsetIn } from './generic-packets.ts';
import { lenencIntAt } from './lenenc.ts';

/** The shapes of reply a command can have. */
export const ReplyShape = {
  /** COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA, COM_QUIT: nothing comes back. */
  NONE: 0,
  /** Exactly one packet: OK, ERR, EOF, or COM_STATISTICS' string. */
  SINGLE: 1,
  /** COM_QUERY and COM_STMT_EXECUTE: OK, ERR, LOCAL INFILE, or result sets. */
  RESULT: 2,
  PREPARE: 3,
  /** COM_STMT_FETCH: rows then a terminator. */
  FETCH: 4,
  /** COM_FIELD_LIST: column definitions then a terminator. */
  FIELD_LIST: 5,
  /** The connection phase and COM_CHANGE_USER: the server ends it with OK or ERR. */
  AUTH: 6,
  /**
   * COM_BINLOG_DUMP: binary log events, each a packet starting with 0x00, until an EOF (a
   * non-blocking dump at the log's end) or an ERR. After a dump the server closes the connection,
   * except when it refused the dump before it began (a missing privilege): then commands go on.
   */
  BINLOG_STREAM: 7,
} as const;
export type ReplyShape = (typeof ReplyShape)[keyof typeof ReplyShape];

/** The reply shape of each command the proxy follows; commands not listed are not followed. */
export function replyShapeOf(command: number): ReplyShape | null {
  switch (command) {
    case Command.QUERY:
    case Command.STMT_EXECUTE:
    case Command.PROCESS_INFO:
    case Command.STMT_BULK_EXECUTE:
      return ReplyShape.RESULT;
    case Command.BINLOG_DUMP:
    case Command.BINLOG_DUMP_GTID:
      return ReplyShape.BINLOG_STREAM;
    case Command.STMT_PREPARE:
      return ReplyShape.PREPARE;
    case Command.STMT_FETCH:
      return ReplyShape.FETCH;
    case Command.FIELD_LIST:
      return ReplyShape.FIELD_LIST;
    case Command.CHANGE_USER:
      return ReplyShape.AUTH;
    case Command.QUIT:
    case Command.STMT_CLOSE:
    case Command.STMT_SEND_LONG_DATA:
      return ReplyShape.NONE;
    case Command.SLEEP:
    case Command.INIT_DB:
    case Command.CREATE_DB:
    case Command.DROP_DB:
    case Command.REFRESH:
    case Command.SHUTDOWN:
    case Command.STATISTICS:
    case Command.CONNECT:
    case Command.PROCESS_KILL:
    case Command.DEBUG:
    case Command.PING:
    case Command.TIME:
    case Command.DELAYED_INSERT:
    case Command.STMT_RESET:
    case Command.SET_OPTION:
    case Command.RESET_CONNECTION:
    case Command.REGISTER_SLAVE:
    case Command.DAEMON:
      return ReplyShape.SINGLE;
    default:
      return null;
  }
}

const State = {
  FIRST: 0,
  COLUMNS: 1,
  COLUMNS_EOF: 2,
  ROWS: 3,
  /** The client is sending a LOCAL INFILE file; an empty packet ends it. */
  INFILE_UPLOAD: 4,
  PREPARE_PARAMS: 5,
  PREPARE_PARAMS_EOF: 6,
  PREPARE_COLUMNS: 7,
  PREPARE_COLUMNS_EOF: 8,
  FIELDS: 9,
  AUTH: 10,
  BINLOG_EVENTS: 11,
  DONE: 12,
} as const;
type State = (typeof State)[keyof typeof State];

/** caching_sha2_password's AuthMoreData body meaning "the password matched the cache". */
const FAST_AUTH_SUCCESS = 0x03;

/** Packets whose first byte is ambiguous must be read whole; this is the largest we need to read. */
export const TRACKER_INSPECT_LIMIT = 1 << 16;

export class ReplyTracker {
  readonly shape: ReplyShape;
  readonly #deprecateEof: boolean;
  readonly #binary: boolean;
  #state: State;
  #remaining = 0;
  #prepareColumns = 0;
  /** Status flags of the reply's last OK or EOF, or -1 when it had none (ERR or no status). */
  status = -1;
  /** Warning count of the reply's last OK or EOF. */
  warnings = 0;
  /**
   * Payload offset of the status field in the packet just fed, or -1 when it has none: a cache
   * hit served in another transaction state patches the stored reply there.
   */
  statusAt = -1;
  /** The reply ended with an ERR packet. */
  failed = false;
  /** The statement id and parameter count of a successful COM_STMT_PREPARE. */
  statementId = -1;
  parameterCount = 0;
  /** Result sets and OKs so far. */
  results = 0;
  /** A row came (of any result set of the reply). */
  sawRow = false;
  /** In an authentication exchange, the server has asked and the client's answer is due. */
  #clientTurn = false;

  constructor(shape: ReplyShape, deprecateEof: boolean, command = 0) {
    this.shape = shape;
    this.#deprecateEof = deprecateEof;
    this.#binary = command === Command.STMT_EXECUTE || command === Command.STMT_FETCH;
    this.#state =
      shape === ReplyShape.FETCH
        ? State.ROWS
        : shape === ReplyShape.FIELD_LIST
          ? State.FIELDS
          : shape === ReplyShape.AUTH
            ? State.AUTH
            : shape === ReplyShape.NONE
              ? State.DONE
              : shape === ReplyShape.BINLOG_STREAM
                ? State.BINLOG_EVENTS
                : State.FIRST;
  }

  get done(): boolean {
    return this.#state === State.DONE;
  }

  /**
   * The client, not the server, speaks next: file contents of LOAD DATA LOCAL, or the answer to
   * an authentication request the server has just sent. Anything else the client sends then is
   * read by the server as what comes after the exchange, so it must not be taken for auth data.
   */
  get awaitsClient(): boolean {
    return this.#state === State.INFILE_UPLOAD || (this.#state === State.AUTH && this.#clientTurn);
  }

  /** An authentication exchange (login or COM_CHANGE_USER) is still under way. */
  get authenticating(): boolean {
    return this.#state === State.AUTH;
  }

  /**
   * Feeds one packet of the server's reply; returns true when it was the reply's last.
   * Throws on a packet that cannot belong to the reply (the connection is then beyond repair).
   */
  feedServer(packet: FramedPacket): boolean {
    // The rest of a 16 MB+ payload: only rows and long strings are that big, they end nothing.
    this.statusAt = -1;
    if (packet.continuation) return false;
    const first = packet.firstByte;
    switch (this.#state) {
      case State.FIRST:
        return this.#first(packet, first);
      case State.COLUMNS:
        if (--this.#remaining === 0)
          this.#state = this.#deprecateEof ? State.ROWS : State.COLUMNS_EOF;
        return false;
      case State.COLUMNS_EOF: {
        if (first === PacketHeader.ERR) return this.#fail();
        this.#readStatus(packet, true);
        // A cursor was opened: rows come later, through COM_STMT_FETCH.
        if (this.#binary && this.status & ServerStatus.CURSOR_EXISTS) return this.#finishResult();
        this.#state = State.ROWS;
        return false;
      }
      case State.ROWS:
        if (first === PacketHeader.ERR) return this.#fail();
        // A row starting with 0xFE is at least 16 MB long, so its first packet is full-sized.
        if (first === PacketHeader.EOF && packet.length < MAX_PACKET_PAYLOAD) {
          this.#readStatus(packet, !this.#deprecateEof);
          return this.#finishResult();
        }
        this.sawRow = true;
        return false;
      case State.PREPARE_PARAMS:
        if (--this.#remaining === 0) {
          if (!this.#deprecateEof) this.#state = State.PREPARE_PARAMS_EOF;
          else return this.#prepareColumnsNext();
        }
        return false;
      case State.PREPARE_PARAMS_EOF:
        return this.#prepareColumnsNext();
      case State.PREPARE_COLUMNS:
        if (--this.#remaining === 0) {
          if (!this.#deprecateEof) this.#state = State.PREPARE_COLUMNS_EOF;
          else return this.#finish();
        }
        return false;
      case State.PREPARE_COLUMNS_EOF:
        return this.#finish();
      case State.FIELDS:
        if (first === PacketHeader.ERR) return this.#fail();
        if (first === PacketHeader.EOF && packet.length < MAX_PACKET_PAYLOAD) return this.#finish();
        return false;
      case State.AUTH:
        if (first === PacketHeader.OK) {
          this.status = readStatus(this.#payload(packet), false)?.status ?? -1;
          return this.#finish();
        }
        if (first === PacketHeader.ERR) return this.#fail();
        // An auth switch request (0xFE), more auth data (0x01) or a plugin's own packet: the
        // client answers, except after caching_sha2_password's "fast auth done" (0x01 0x03),
        // which the server follows with its OK at once.
        this.#clientTurn = !(
          first === PacketHeader.AUTH_MORE_DATA &&
          packet.length === 2 &&
          packet.payload?.[1] === FAST_AUTH_SUCCESS
        );
        return false;
      case State.BINLOG_EVENTS:
        if (first === PacketHeader.ERR) return this.#fail();
        // Every event packet starts with 0x00: an 0xFE packet is the end of the stream.
        if (first === PacketHeader.EOF) return this.#finish();
        return false;
      case State.INFILE_UPLOAD:
        throw new Error('server sent a packet while the client was sending a LOCAL INFILE file');
      case State.DONE:
        throw new Error('server sent a packet after the end of the reply');
    }
  }

  /** Feeds a packet the client sent while {@link awaitsClient}. */
  feedClient(packet: FramedPacket): void {
    if (packet.continuation) return;
    if (this.#state === State.INFILE_UPLOAD && packet.length === 0) this.#state = State.FIRST;
    else if (this.#state === State.AUTH) this.#clientTurn = false;
  }

  #first(packet: FramedPacket, first: number): boolean {
    if (this.shape === ReplyShape.SINGLE) {
      if (first === PacketHeader.ERR) return this.#fail();
      if (first === PacketHeader.OK || first === PacketHeader.EOF) {
        const payload = packet.payload;
        if (payload !== null)
          this.status =
            readStatus(payload, first === PacketHeader.EOF && payload.length < 9)?.status ?? -1;
      }
      return this.#finish();
    }
    if (first === PacketHeader.ERR) return this.#fail();
    if (this.shape === ReplyShape.PREPARE) {
      const payload = this.#payload(packet);
      if (first !== PacketHeader.OK || payload.length < 9)
        throw new Error('malformed COM_STMT_PREPARE reply');
      this.statementId = payload.readUInt32LE(1);
      this.#prepareColumns = payload.readUInt16LE(5);
      this.#remaining = this.parameterCount = payload.readUInt16LE(7);
      if (this.#remaining > 0) {
        this.#state = State.PREPARE_PARAMS;
        return false;
      }
      return this.#prepareColumnsNext();
    }
    if (first === PacketHeader.OK) {
      this.#readStatus(packet, false);
      return this.#finishResult();
    }
    if (first === PacketHeader.LOCAL_INFILE) {
      this.#state = State.INFILE_UPLOAD;
      return false;
    }
    const from = payloadStart(packet);
    const columns = lenencIntAt(this.#payloadBytes(packet), from, from + packet.length);
    if (columns <= 0) throw new Error('malformed result set header');
    this.#remaining = columns;
    this.#state = State.COLUMNS;
    return false;
  }

  #prepareColumnsNext(): boolean {
    if (this.#prepareColumns === 0) return this.#finish();
    this.#remaining = this.#prepareColumns;
    this.#state = State.PREPARE_COLUMNS;
    return false;
  }

  /** One result (OK or result set) ended; another follows when the server says so. */
  #finishResult(): boolean {
    this.results++;
    if (this.status & ServerStatus.MORE_RESULTS_EXISTS) {
      this.#state = State.FIRST;
      return false;
    }
    this.#state = State.DONE;
    return true;
  }

  #finish(): boolean {
    this.results++;
    this.#state = State.DONE;
    return true;
  }

  #fail(): boolean {
    this.failed = true;
    this.status = -1;
    this.#state = State.DONE;
    return true;
  }

  /** Status and warnings of a terminating packet, and where the status sits (parsed once). */
  #readStatus(packet: FramedPacket, eofFormat: boolean): void {
    const bytes = this.#payloadBytes(packet);
    const from = payloadStart(packet);
    const at = statusOffsetIn(bytes, from, from + packet.length, eofFormat);
    this.statusAt = at;
    if (at < 0) {
      this.status = 0;
      this.warnings = 0;
      return;
    }
    this.status = bytes.readUInt16LE(from + at);
    this.warnings = bytes.readUInt16LE(from + (eofFormat ? 1 : at + 2));
  }

  /**
   * The buffer that holds the packet's payload: the one it was read in, when the framer says
   * where (every reply's terminators are then read with no view made of them), else its view.
   * The payload starts at payloadStart(packet) there.
   */
  #payloadBytes(packet: FramedPacket): Buffer {
    return packet.source ?? this.#payload(packet);
  }

  #payload(packet: FramedPacket): Buffer {
    if (packet.payload === null)
      throw new Error(`reply packet of ${packet.length} bytes where a short one belongs`);
    return packet.payload;
  }
}

/** Where the packet's payload starts in ReplyTracker.#payloadBytes(packet). */
function payloadStart(packet: FramedPacket): number {
  return packet.source === undefined || packet.source === null ? 0 : packet.start! + 4;
}
