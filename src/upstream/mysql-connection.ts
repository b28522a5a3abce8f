/**
 * A lean client connection built on the protocol layer: it logs in with mysql_native_password,
 * sends text queries and prepared statements, and resolves each command when its reply has
 * ended, without decoding rows. The benchmark driver uses it so that measuring costs little CPU;
 * commands may be pipelined.
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { Capability, Command, MAX_PACKET_PAYLOAD, PacketHeader } from '../protocol/constants.ts';
import { readErr } from '../protocol/generic-packets.ts';
import type { ErrInfo } from '../protocol/generic-packets.ts';
import { encodeHandshakeResponse, greetingScramble, parseGreeting } from '../protocol/handshake.ts';
import { readNulBytes } from '../protocol/lenenc.ts';
import { readTextRows } from '../protocol/text-rows.ts';
import { NATIVE_PASSWORD_PLUGIN, nativePasswordScramble } from '../protocol/native-password.ts';
import { encodePacket } from '../protocol/packet.ts';
import { PacketFramer } from '../protocol/packet-framer.ts';
import { startServerTls } from '../protocol/tls-over-reads.ts';
import type { TlsOverReads } from '../protocol/tls-over-reads.ts';
import type { FramedPacket } from '../protocol/packet-framer.ts';
import { ReplyTracker, TRACKER_INSPECT_LIMIT, replyShapeOf } from '../protocol/reply-tracker.ts';
import { execute, prepare, statementCommand } from '../protocol/statement-commands.ts';
import type { Param } from '../protocol/statement-commands.ts';

export interface ConnectionOptions {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string | null;
  connectTimeoutMs?: number;
  /** TLS to the server; null or absent: the connection stays plain. */
  tls?: ServerTls | null;
}

/** TLS to a server (--backend-tls preferred, required or follow), and how its certificate is checked. */
export interface ServerTls {
  /** A server that offers no TLS is refused (otherwise: the connection stays plain). */
  required: boolean;
  /**
   * A client's connection to the server is TLS only when the client's own connection is
   * (--backend-tls follow). The proxy's own connections have no client to follow: they use TLS
   * when the server offers it, as under preferred.
   */
  followsClient: boolean;
  /** PEM CA certificates to trust instead of the system's; null: the system's. */
  ca: string | null;
  /** Refuse a certificate not signed by a trusted CA or not naming the server. */
  verify: boolean;
}

/** An error reply of the server. */
export class ServerError extends Error {
  readonly errno: number;
  readonly sqlState: string;
  constructor(err: ErrInfo) {
    super(`${err.errno} (${err.sqlState}): ${err.message}`);
    this.errno = err.errno;
    this.sqlState = err.sqlState;
  }
}

/** The outcome of a command: the server's error, or none. */
export interface CommandResult {
  error: ErrInfo | null;
  /** Status flags of the reply's last OK/EOF, -1 when it had none. */
  status: number;
  /** Of a successful COM_STMT_PREPARE: the statement id and its parameter count. */
  statementId: number;
  parameterCount: number;
}

export interface PreparedStatement {
  id: number;
  parameterCount: number;
}

interface PendingCommand {
  tracker: ReplyTracker;
  error: ErrInfo | null;
  /** Copies of the reply's packets, for the few commands whose rows are wanted. */
  packets: Buffer[] | null;
  resolve: (result: CommandResult) => void;
  reject: (error: Error) => void;
}

/** What this client asks for; the server's greeting narrows it. */
export const CLIENT_CAPABILITIES =
  Capability.CLIENT_MYSQL |
  Capability.LONG_FLAG |
  Capability.PROTOCOL_41 |
  Capability.TRANSACTIONS |
  Capability.SECURE_CONNECTION |
  Capability.MULTI_STATEMENTS |
  Capability.MULTI_RESULTS |
  Capability.PS_MULTI_RESULTS |
  Capability.PLUGIN_AUTH |
  Capability.DEPRECATE_EOF;

const UTF8MB4_GENERAL_CI = 45;
const READ_BUFFER_SIZE = 64 * 1024;

export class MysqlConnection {
  /** The server: its TCP socket, or TLS over it once the login started TLS. */
  #socket: Socket;
  readonly #framer: PacketFramer;
  readonly #pending: PendingCommand[] = [];
  #deprecateEof = false;
  #closedError: Error | null = null;
  /** Told once when a stream (see stream()) ends. */
  #streamEnd: ((error: Error) => void) | null = null;

  /** Routes reads to the login or the command phase. */
  readonly #setReader: (handler: (chunk: Buffer) => void) => void;
  /** Hands the TCP socket's reads to TLS from now on. */
  readonly #readThrough: (tls: TlsOverReads) => void;

  private constructor(
    socket: Socket,
    setReader: (handler: (chunk: Buffer) => void) => void,
    readThrough: (tls: TlsOverReads) => void,
  ) {
    this.#socket = socket;
    this.#setReader = setReader;
    this.#readThrough = readThrough;
    this.#framer = new PacketFramer((packet) => this.#onPacket(packet), TRACKER_INSPECT_LIMIT);
  }

  static async connect(options: ConnectionOptions): Promise<MysqlConnection> {
    // Reads land in one reused buffer and go straight to a callback, skipping the stream
    // machinery and an allocation per read: the driver's own CPU is part of every measurement.
    let onRead: (chunk: Buffer) => void = () => {};
    let tls: TlsOverReads | null = null;
    const readBuffer = Buffer.allocUnsafe(READ_BUFFER_SIZE);
    const socket = connect({
      host: options.host,
      port: options.port,
      noDelay: true,
      onread: {
        buffer: readBuffer,
        callback: (bytes) => {
          if (tls !== null) tls.feed(readBuffer, 0, bytes);
          else onRead(readBuffer.subarray(0, bytes));
          return true;
        },
      },
    });
    const connection = new MysqlConnection(
      socket,
      (handler) => (onRead = handler),
      (started) => {
        tls = started;
        started.socket.on('data', (chunk: Buffer) => onRead(chunk));
      },
    );
    try {
      await connection.#login(options);
    } catch (error) {
      socket.destroy();
      throw error;
    }
    return connection;
  }

  /** Reads the connection phase packet by packet, then hands the socket to command handling. */
  async #login(options: ConnectionOptions): Promise<void> {
    const packets: FramedPacket[] = [];
    let wake: (() => void) | null = null;
    let failure: Error | null = null;
    const loginFramer = new PacketFramer((packet) => {
      packets.push({ ...packet, payload: Buffer.from(packet.payload!) });
    });
    const onData = (chunk: Buffer): void => {
      loginFramer.push(chunk);
      wake?.();
    };
    const onEnd = (error?: Error): void => {
      failure = error ?? new Error('the server closed the connection during login');
      wake?.();
    };
    this.#setReader(onData);
    const tcp = this.#socket;
    const onClose = (): void => onEnd();
    tcp.once('error', onEnd);
    tcp.once('close', onClose);
    const timeout = setTimeout(
      () => onEnd(new Error('login timed out')),
      options.connectTimeoutMs ?? 10_000,
    );
    const next = async (): Promise<FramedPacket> => {
      while (packets.length === 0) {
        if (failure) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
      }
      return packets.shift()!;
    };
    try {
      const greeting = await next();
      if (greeting.firstByte === PacketHeader.ERR)
        throw new ServerError(readErr(greeting.payload!));
      const offered = parseGreeting(greeting.payload!);
      if (offered === null) throw new Error('unreadable server greeting');
      const tls = options.tls ?? null;
      const secure = tls !== null && (offered.capabilities & Capability.SSL) !== 0;
      if (tls?.required === true && !secure) {
        throw new Error(
          `the server at ${options.host}:${options.port} offers no TLS, which --backend-tls required asks for`,
        );
      }
      const capabilities =
        (CLIENT_CAPABILITIES |
          (options.database !== null ? Capability.CONNECT_WITH_DB : 0) |
          (secure ? Capability.SSL : 0)) &
        (offered.capabilities | Capability.CLIENT_MYSQL);
      this.#deprecateEof = (capabilities & Capability.DEPRECATE_EOF) !== 0;
      const response = encodeHandshakeResponse({
        capabilities: capabilities >>> 0,
        characterSet: UTF8MB4_GENERAL_CI,
        user: options.user,
        authResponse: nativePasswordScramble(options.password, greetingScramble(greeting.payload!)),
        database: options.database,
        authPlugin: NATIVE_PASSWORD_PLUGIN,
      });
      let sequenceId = greeting.sequenceId + 1;
      if (secure) {
        // An SSLRequest (the response's first 32 bytes), then TLS, then the response inside it.
        this.#socket.write(encodePacket(response.subarray(0, 32), sequenceId++));
        const started = startServerTls(this.#socket, { ...tls, host: options.host });
        this.#readThrough(started);
        started.socket.once('error', onEnd);
        started.socket.once('close', onClose);
        this.#socket = started.socket;
      }
      this.#socket.write(encodePacket(response, sequenceId));
      for (;;) {
        const reply = await next();
        const payload = reply.payload!;
        if (reply.firstByte === PacketHeader.OK) break;
        if (reply.firstByte === PacketHeader.ERR) throw new ServerError(readErr(payload));
        if (reply.firstByte !== PacketHeader.EOF) throw new Error('unexpected packet during login');
        const plugin = readNulBytes(payload, 1);
        if (plugin.value.toString('latin1') !== NATIVE_PASSWORD_PLUGIN) {
          throw new Error(
            `the server asks for ${plugin.value.toString('latin1')}; only ${NATIVE_PASSWORD_PLUGIN} is supported`,
          );
        }
        const scramble = payload.subarray(plugin.end, plugin.end + 20);
        this.#socket.write(
          encodePacket(nativePasswordScramble(options.password, scramble), reply.sequenceId + 1),
        );
      }
    } finally {
      clearTimeout(timeout);
      // Only the login's own: TLS over the socket listens to it too.
      for (const socket of new Set([tcp, this.#socket])) {
        socket.off('error', onEnd);
        socket.off('close', onClose);
      }
    }
    if (packets.length > 0) throw new Error('the server sent data after login');
    this.#setReader((chunk) => this.#onData(chunk));
    this.#socket.on('error', (error) => this.#fail(error));
    this.#socket.on('close', () => this.#fail(new Error('connection closed')));
  }

  #onData(chunk: Buffer): void {
    try {
      this.#framer.push(chunk);
    } catch (error) {
      this.#fail(error as Error);
      this.#socket.destroy();
    }
  }

  #onPacket(packet: FramedPacket): void {
    const head = this.#pending[0];
    if (head === undefined) throw new Error('the server sent data nobody asked for');
    if (packet.firstByte === PacketHeader.ERR && packet.payload !== null && !packet.continuation) {
      head.error = readErr(packet.payload);
    }
    if (head.packets !== null) {
      if (packet.payload === null) throw new Error('a row too large to collect');
      head.packets.push(Buffer.from(packet.payload));
    }
    if (!head.tracker.feedServer(packet)) return;
    this.#pending.shift();
    const { tracker } = head;
    head.resolve({
      error: head.error,
      status: tracker.status,
      statementId: tracker.statementId,
      parameterCount: tracker.parameterCount,
    });
  }

  #fail(error: Error): void {
    this.#closedError ??= error;
    const streamEnd = this.#streamEnd;
    this.#streamEnd = null;
    streamEnd?.(this.#closedError);
    for (const pending of this.#pending.splice(0)) pending.reject(error);
  }

  get closed(): boolean {
    return this.#closedError !== null;
  }

  /** Sends one command and resolves when its reply has ended. */
  #command(payload: Buffer, packets: Buffer[] | null = null): Promise<CommandResult> {
    return this.#send(encodePacket(payload, 0), packets);
  }

  /** Sends a framed command packet; its command byte decides how the reply is followed. */
  #send(packet: Buffer, packets: Buffer[] | null = null): Promise<CommandResult> {
    const command = packet[4]!;
    return new Promise<CommandResult>((resolve, reject) => {
      if (this.#closedError) {
        reject(this.#closedError);
        return;
      }
      const tracker = new ReplyTracker(replyShapeOf(command)!, this.#deprecateEof, command);
      this.#pending.push({ tracker, error: null, packets, resolve, reject });
      this.#socket.write(packet);
    });
  }

  query(sql: string): Promise<CommandResult> {
    // One allocation for the whole packet: this is the benchmark driver's hot path.
    const length = Buffer.byteLength(sql, 'utf8');
    if (length + 1 >= MAX_PACKET_PAYLOAD) {
      return this.#command(Buffer.concat([Buffer.from([Command.QUERY]), Buffer.from(sql, 'utf8')]));
    }
    const packet = Buffer.allocUnsafe(length + 5);
    packet.writeUIntLE(length + 1, 0, 3);
    packet[3] = 0;
    packet[4] = Command.QUERY;
    packet.write(sql, 5, 'utf8');
    return this.#send(packet);
  }

  /**
   * Runs a text query and returns its first result set's rows as strings (null for NULL). For
   * small administrative queries (status counters); throws the server's error.
   */
  async queryRows(sql: string): Promise<Array<Array<string | null>>> {
    const packets: Buffer[] = [];
    const result = await this.#command(
      Buffer.concat([Buffer.from([Command.QUERY]), Buffer.from(sql, 'utf8')]),
      packets,
    );
    if (result.error) throw new ServerError(result.error);
    return readTextRows(packets, this.#deprecateEof);
  }

  async prepare(sql: string): Promise<PreparedStatement> {
    const result = await this.#command(prepare(sql));
    if (result.error) throw new ServerError(result.error);
    return { id: result.statementId, parameterCount: result.parameterCount };
  }

  execute(statement: PreparedStatement, params: Param[]): Promise<CommandResult> {
    return this.#command(execute(statement.id, params));
  }

  closeStatement(statement: PreparedStatement): void {
    if (!this.#closedError) {
      this.#socket.write(encodePacket(statementCommand(Command.STMT_CLOSE, statement.id), 0));
    }
  }

  /**
   * Sends a command whose reply is an endless stream of packets (COM_BINLOG_DUMP): from then on
   * the connection belongs to the stream. Each payload, continuation packets joined, goes to
   * `onPayload`, valid only during the call (it may be a view of the read buffer). `onEnd` is
   * told once, when the connection closes or fails; a handler that throws closes it.
   */
  stream(
    payload: Buffer,
    onPayload: (payload: Buffer) => void,
    onEnd: (error: Error) => void,
  ): void {
    if (this.#closedError) {
      onEnd(this.#closedError);
      return;
    }
    if (this.#pending.length > 0) throw new Error('a stream starts on an idle connection');
    let parts: Buffer[] | null = null;
    const framer = new PacketFramer((packet) => {
      const body = packet.payload!;
      if (packet.length === MAX_PACKET_PAYLOAD) {
        (parts ??= []).push(Buffer.from(body));
        return;
      }
      if (parts !== null) {
        parts.push(body);
        const whole = Buffer.concat(parts);
        parts = null;
        onPayload(whole);
      } else onPayload(body);
    }, MAX_PACKET_PAYLOAD);
    this.#streamEnd = onEnd;
    this.#setReader((chunk) => {
      try {
        framer.push(chunk);
      } catch (error) {
        this.#fail(error as Error);
        this.#socket.destroy();
      }
    });
    this.#socket.write(encodePacket(payload, 0));
  }

  /** Sends COM_QUIT and closes; commands still pending are rejected. */
  close(): void {
    if (this.#closedError === null) this.#socket.end(encodePacket(Buffer.from([Command.QUIT]), 0));
    this.#fail(new Error('connection closed by the client'));
  }

  destroy(): void {
    this.#socket.destroy();
    this.#fail(new Error('connection destroyed'));
  }
}
