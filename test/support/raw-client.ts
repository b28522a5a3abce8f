/**
 * A bare MySQL protocol client for tests: it logs in with mysql_native_password and returns each
 * reply as the exact bytes the server (or the proxy) sent, so replies can be compared byte for
 * byte. Reply ends are found with the project's ReplyTracker; tests check them independently by
 * following every command with a COM_PING whose reply must be exactly one OK packet.
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { Capability, Command, PacketHeader } from '../../src/protocol/constants.ts';
import { readErr } from '../../src/protocol/generic-packets.ts';
import type { ErrInfo } from '../../src/protocol/generic-packets.ts';
import {
  encodeHandshakeResponse,
  greetingScramble,
  parseGreeting,
} from '../../src/protocol/handshake.ts';
import { CompressedPackets } from '../../src/protocol/compressed-packets.ts';
import { readNulBytes } from '../../src/protocol/lenenc.ts';
import {
  NATIVE_PASSWORD_PLUGIN,
  nativePasswordScramble,
} from '../../src/protocol/native-password.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import { CLIENT_CAPABILITIES } from '../../src/upstream/mysql-connection.ts';
import { PacketFramer } from '../../src/protocol/packet-framer.ts';
import { ReplyTracker, replyShapeOf } from '../../src/protocol/reply-tracker.ts';

export interface RawClientOptions {
  host: string;
  port: number;
  user: string;
  password?: string;
  database?: string | null;
  deprecateEof?: boolean;
  /** Extra capability bits to request. */
  extraCapabilities?: number;
  /**
   * MariaDB's extended capabilities to request (as a MariaDB client: CLIENT_MYSQL is then
   * cleared), narrowed to what the server offers.
   */
  mariaDbCapabilities?: number;
  /**
   * Command payloads sent in the same write as the handshake response, before the login's OK
   * (a pipelining client); their replies are left in the queue for readPacket().
   */
  pipelined?: Buffer[];
  /**
   * Ask for the compressed protocol (CLIENT_COMPRESS): after the login, packets go both ways in
   * compressed packets. `received` then holds the compressed bytes as they came.
   */
  compress?: boolean;
}

/** One physical packet as received: header and payload. */
export interface RawPacket {
  sequenceId: number;
  payload: Buffer;
}

export class LoginError extends Error {
  readonly err: ErrInfo;
  constructor(err: ErrInfo) {
    super(`${err.errno} (${err.sqlState}): ${err.message}`);
    this.err = err;
  }
}

export class RawClient {
  readonly socket: Socket;
  readonly #framer: PacketFramer;
  readonly #queue: RawPacket[] = [];
  #wake: (() => void) | null = null;
  #closed = false;
  #error: Error | null = null;
  deprecateEof = false;
  /** The greeting's scramble, which COM_CHANGE_USER's mysql_native_password answer uses. */
  scramble: Buffer = Buffer.alloc(0);
  /** Every byte received, for tests that look at the stream as a whole. */
  received: Buffer[] = [];
  /** The compressed protocol, once a login that asked for it has ended. */
  #compression: CompressedPackets | null = null;
  /** What the login asked for, narrowed to what the server offered. */
  #capabilities = 0;

  private constructor(socket: Socket) {
    this.socket = socket;
    this.#framer = new PacketFramer((packet) => {
      this.#queue.push({ sequenceId: packet.sequenceId, payload: Buffer.from(packet.payload!) });
    });
    socket.on('data', (chunk: Buffer) => {
      this.received.push(chunk);
      if (this.#compression === null) this.#framer.push(chunk);
      else
        this.#compression.read(chunk, chunk.length, (bytes, length) =>
          this.#framer.push(bytes, length),
        );
      this.#notify();
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#notify();
    });
    socket.on('error', (error) => {
      this.#error = error;
    });
  }

  /** Opens a socket without logging in. */
  static async open(host: string, port: number): Promise<RawClient> {
    const socket = connect({ host, port, noDelay: true });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new RawClient(socket);
  }

  static async connect(options: RawClientOptions): Promise<RawClient> {
    const client = await RawClient.open(options.host, options.port);
    await client.login(options);
    return client;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** The next physical packet, or null once the connection closed. */
  async readPacket(timeoutMs = 30_000): Promise<RawPacket | null> {
    const deadline = Date.now() + timeoutMs;
    while (this.#queue.length === 0) {
      if (this.#closed) return null;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error('timed out waiting for a packet');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.#queue.shift()!;
  }

  /** The login asked for the compressed protocol and the other end agreed. */
  get compressed(): boolean {
    return this.#compression !== null;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get error(): Error | null {
    return this.#error;
  }

  send(payload: Buffer, sequenceId = 0): void {
    this.writeRaw(encodePacket(payload, sequenceId));
  }

  /** Writes packets as they are, in compressed packets when the login asked for them. */
  writeRaw(bytes: Buffer): void {
    this.socket.write(this.frame(bytes));
  }

  /**
   * The bytes as this connection carries them: in a compressed packet when it is compressed,
   * numbered `sequence` when given (else one past the last read or written, as within a command).
   */
  frame(bytes: Buffer, sequence?: number): Buffer {
    if (this.#compression === null) return bytes;
    if (sequence !== undefined) this.#compression.numberNext(sequence);
    return this.#compression.wrap(bytes);
  }

  async login(options: RawClientOptions): Promise<void> {
    const greeting = await this.readPacket();
    if (greeting === null) throw new Error('connection closed before the greeting');
    if (greeting.payload[0] === PacketHeader.ERR) throw new LoginError(readErr(greeting.payload));
    this.scramble = greetingScramble(greeting.payload);
    const { payload: response, deprecateEof } = handshakeResponseFor(greeting.payload, options);
    this.deprecateEof = deprecateEof;
    this.#capabilities = response.readUInt32LE(0);
    this.socket.write(
      Buffer.concat([
        encodePacket(response, greeting.sequenceId + 1),
        ...(options.pipelined ?? []).map((payload) => encodePacket(payload, 0)),
      ]),
    );

    for (;;) {
      const reply = await this.readPacket();
      if (reply === null) throw new Error('connection closed during authentication');
      const first = reply.payload[0];
      if (first === PacketHeader.OK) {
        if ((this.#capabilities & Capability.COMPRESS) !== 0)
          this.#compression = new CompressedPackets();
        return;
      }
      if (first === PacketHeader.ERR) throw new LoginError(readErr(reply.payload));
      if (first === PacketHeader.EOF) {
        // Auth switch: plugin name, then the new scramble.
        const plugin = readNulBytes(reply.payload, 1);
        if (plugin.value.toString() !== 'mysql_native_password') {
          throw new Error(`unsupported auth plugin ${plugin.value.toString()}`);
        }
        const newScramble = reply.payload.subarray(plugin.end, plugin.end + 20);
        this.send(
          nativePasswordScramble(options.password ?? '', newScramble),
          reply.sequenceId + 1,
        );
        continue;
      }
      throw new Error(`unexpected packet 0x${first?.toString(16)} during authentication`);
    }
  }

  /**
   * Sends a command and returns its reply's packets. `onLocalInfile` supplies the file contents
   * when the server asks for a LOCAL INFILE.
   */
  async command(
    payload: Buffer,
    onLocalInfile?: (fileName: string) => Buffer,
  ): Promise<RawPacket[]> {
    const command = payload[0]!;
    const shape = replyShapeOf(command);
    if (shape === null)
      throw new Error(`command 0x${command.toString(16)} has no known reply shape`);
    const tracker = new ReplyTracker(shape, this.deprecateEof, command);
    this.#compression?.restartSequence();
    this.send(payload);
    const packets: RawPacket[] = [];
    const framer = new PacketFramer((packet) => {
      tracker.feedServer(packet);
    });
    while (!tracker.done) {
      const packet = await this.readPacket();
      if (packet === null)
        throw new Error(`connection closed mid-reply after ${packets.length} packets`);
      packets.push(packet);
      framer.push(encodePacketHeaderOnly(packet));
      if (tracker.awaitsClient && !tracker.done) {
        const fileName = packet.payload.subarray(1).toString();
        const contents = onLocalInfile?.(fileName) ?? Buffer.alloc(0);
        let sequenceId = packet.sequenceId + 1;
        for (let offset = 0; offset < contents.length; offset += 65536) {
          const part = contents.subarray(offset, offset + 65536);
          this.send(part, sequenceId);
          sequenceId = (sequenceId + 1) & 0xff;
        }
        this.send(Buffer.alloc(0), sequenceId);
        tracker.feedClient({
          sequenceId,
          length: 0,
          continuation: false,
          firstByte: -1,
          payload: Buffer.alloc(0),
          raw: null,
          end: 0,
        });
      }
    }
    return packets;
  }

  query(sql: string): Promise<RawPacket[]> {
    return this.command(Buffer.concat([Buffer.from([Command.QUERY]), Buffer.from(sql, 'utf8')]));
  }

  /** Sends a command that has no reply (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA). */
  sendOnly(payload: Buffer): void {
    this.startCommand(payload);
  }

  /** Sends a command without waiting for its reply, numbered as a client starts a command. */
  startCommand(payload: Buffer): void {
    this.#compression?.restartSequence();
    this.send(payload);
  }

  close(): void {
    if (this.#closed) return;
    const quit = encodePacket(Buffer.from([Command.QUIT]), 0);
    this.socket.end(this.#compression === null ? quit : this.#compression.wrap(quit));
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/**
 * The HandshakeResponse41 this client answers `greeting` with: the driver's capabilities plus
 * LOCAL INFILE (DEPRECATE_EOF only when asked for), narrowed to what the server offers, and a
 * mysql_native_password scramble. `authPlugin` names another plugin, to make the server switch.
 */
export function handshakeResponseFor(
  greeting: Buffer,
  options: RawClientOptions,
  authPlugin = NATIVE_PASSWORD_PLUGIN,
): { payload: Buffer; deprecateEof: boolean } {
  const parsed = parseGreeting(greeting)!;
  const serverCaps = parsed.capabilities;
  const scramble = greetingScramble(greeting);
  const deprecateEof =
    (options.deprecateEof ?? false) && (serverCaps & Capability.DEPRECATE_EOF) !== 0;
  let caps =
    (CLIENT_CAPABILITIES & ~Capability.DEPRECATE_EOF) |
    Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA |
    Capability.LOCAL_FILES |
    (options.compress === true ? Capability.COMPRESS : 0) |
    (options.extraCapabilities ?? 0);
  if (deprecateEof) caps |= Capability.DEPRECATE_EOF;
  if (options.database) caps |= Capability.CONNECT_WITH_DB;
  caps = (caps & (serverCaps | Capability.CLIENT_MYSQL)) >>> 0;
  const mariaDbCapabilities =
    options.mariaDbCapabilities === undefined
      ? undefined
      : (options.mariaDbCapabilities & parsed.mariaDbCapabilities) >>> 0;
  if (mariaDbCapabilities !== undefined) caps = (caps & ~Capability.CLIENT_MYSQL) >>> 0;

  const response = encodeHandshakeResponse({
    capabilities: caps,
    ...(mariaDbCapabilities === undefined ? {} : { mariaDbCapabilities }),
    characterSet: 45, // utf8mb4_general_ci
    user: options.user,
    authResponse: nativePasswordScramble(options.password ?? '', scramble),
    database: options.database ?? null,
    authPlugin,
  });
  return { payload: response, deprecateEof };
}

/** Re-frames a received packet so the tracker sees it exactly as it came. */
function encodePacketHeaderOnly(packet: RawPacket): Buffer {
  const out = Buffer.allocUnsafe(packet.payload.length + 4);
  out.writeUIntLE(packet.payload.length, 0, 3);
  out[3] = packet.sequenceId;
  packet.payload.copy(out, 4);
  return out;
}

/** Flattens a reply into one buffer with headers, as it was on the wire. */
export function replyBytes(packets: RawPacket[]): Buffer {
  return Buffer.concat(packets.map(encodePacketHeaderOnly));
}

/** The ERR of a reply, or null. */
export function replyError(packets: RawPacket[]): ErrInfo | null {
  const last = packets.at(-1);
  return last !== undefined && last.payload[0] === PacketHeader.ERR ? readErr(last.payload) : null;
}
