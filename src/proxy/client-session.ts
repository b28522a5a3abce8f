/**
 * One client connection and its own backend connection (1:1).
 *
 * The backend authenticates the client itself: the proxy connects first, hands the client the
 * backend's greeting (and so its scramble), and relays the exchange. Afterwards every command is
 * forwarded at once (clients may pipeline), and a {@link ReplyTracker} per command follows the
 * backend's reply so the proxy always knows where each reply ends. Reply bytes are relayed as they
 * arrive, chunk by chunk, never re-encoded.
 */
import type { Socket } from 'node:net';
import { connect } from 'node:net';
import { Capability, Command, PacketHeader } from '../protocol/constants.ts';
import { ProxyError, ProxyErrorCode } from '../protocol/errors.ts';
import { encodeErr } from '../protocol/generic-packets.ts';
import {
  isSslRequest,
  restrictGreeting,
  restrictHandshakeResponse,
} from '../protocol/handshake.ts';
import type { Greeting } from '../protocol/handshake.ts';
import type { FramedPacket } from '../protocol/packet-framer.ts';
import { PacketFramer } from '../protocol/packet-framer.ts';
import {
  ReplyShape,
  ReplyTracker,
  TRACKER_INSPECT_LIMIT,
  replyShapeOf,
} from '../protocol/reply-tracker.ts';
import type { Logger } from './log.ts';

export interface BackendAddress {
  host: string;
  port: number;
}

export interface SessionOptions {
  backend: BackendAddress;
  log: Logger;
  /** How long a backend connection attempt may take before the client is told it failed. */
  connectTimeoutMs: number;
}

const COM_QUIT = Buffer.from([1, 0, 0, 0, Command.QUIT]);

const Phase = {
  /** Waiting for the backend's greeting. */
  GREETING: 0,
  /** Waiting for the client's HandshakeResponse41. */
  HANDSHAKE_RESPONSE: 1,
  /** Authentication exchange, then commands: both follow the reply queue. */
  COMMANDS: 2,
  /** An unknown command was relayed: from here on both directions are a plain byte pipe. */
  PIPE: 3,
  CLOSED: 4,
} as const;
type Phase = (typeof Phase)[keyof typeof Phase];

export class ClientSession {
  readonly #client: Socket;
  readonly #backend: Socket;
  readonly #options: SessionOptions;
  readonly #clientFramer: PacketFramer;
  readonly #backendFramer: PacketFramer;
  /** Replies still to come from the backend, oldest first. */
  readonly #pending: ReplyTracker[] = [];
  #phase: Phase = Phase.GREETING;
  #greeting: Greeting | null = null;
  #capabilities = 0;
  #sentToClient = false;
  #draining = false;
  /** The initial authentication exchange, whose failure ends the connection. */
  #login: ReplyTracker | null = null;
  /** Close once the chunk being relayed has been written: its last reply ends the session. */
  #closeAfterRelay = false;
  #onClose: (() => void) | null = null;

  constructor(client: Socket, options: SessionOptions) {
    this.#client = client;
    this.#options = options;
    this.#clientFramer = new PacketFramer((packet) => this.#onClientPacket(packet));
    this.#backendFramer = new PacketFramer(
      (packet) => this.#onBackendPacket(packet),
      TRACKER_INSPECT_LIMIT,
    );

    client.setNoDelay(true);
    // Nothing is read from the client before the backend has greeted it.
    client.pause();
    client.on('data', (chunk: Buffer) => this.#guard(() => this.#onClientData(chunk)));
    client.on('drain', () => this.#backend.resume());
    client.on('error', () => this.close());
    client.on('close', () => this.close());

    this.#backend = connect({
      host: options.backend.host,
      port: options.backend.port,
      noDelay: true,
    });
    // Bounded until the greeting: a backend that accepts but never speaks must not hang clients.
    this.#backend.setTimeout(options.connectTimeoutMs, () => {
      this.#backend.destroy(new Error(`no greeting within ${options.connectTimeoutMs} ms`));
    });
    this.#backend.on('data', (chunk: Buffer) => this.#guard(() => this.#onBackendData(chunk)));
    this.#backend.on('drain', () => {
      if (!this.#draining) this.#client.resume();
    });
    this.#backend.on('error', (error: NodeJS.ErrnoException) => this.#onBackendError(error));
    this.#backend.on('close', () => this.#onBackendClose());
  }

  /** Called once, when both connections are gone. */
  set onClose(callback: () => void) {
    this.#onClose = callback;
  }

  /** Stops reading commands and closes once the commands already sent have their replies. */
  drain(): void {
    this.#draining = true;
    this.#client.pause();
    if (this.#phase !== Phase.COMMANDS || this.#pending.length === 0) this.close();
  }

  close(): void {
    if (this.#phase === Phase.CLOSED) return;
    const wasIdle = this.#pending.length === 0;
    this.#phase = Phase.CLOSED;
    // Flush what the client is owed, then close.
    this.#client.destroySoon();
    if (wasIdle && this.#backend.writable && !this.#backend.connecting) {
      // A polite COM_QUIT, so the server does not count an aborted connection.
      this.#backend.end(COM_QUIT);
    } else {
      this.#backend.destroy();
    }
    const onClose = this.#onClose;
    this.#onClose = null;
    onClose?.();
  }

  // --- client → backend ---------------------------------------------------------------------

  #onClientData(chunk: Buffer): void {
    // Even in PIPE phase the framer is fed, so a packet it holds in part is never lost.
    this.#backend.cork();
    try {
      this.#clientFramer.push(chunk);
    } finally {
      this.#backend.uncork();
    }
  }

  #onClientPacket(packet: FramedPacket): void {
    const raw = packet.raw!;
    switch (this.#phase) {
      case Phase.HANDSHAKE_RESPONSE:
        this.#onHandshakeResponse(packet, raw);
        return;
      case Phase.COMMANDS:
        break;
      case Phase.PIPE:
        this.#toBackend(raw);
        return;
      default:
        return;
    }
    const head = this.#pending[0];
    if (packet.continuation || head?.awaitsClient) {
      // The rest of a 16 MB+ command, a LOCAL INFILE file, or an authentication answer.
      head?.feedClient(packet);
      this.#toBackend(raw);
      return;
    }
    if (packet.length === 0) {
      this.#failClient(
        new ProxyError(ProxyErrorCode.MALFORMED_PACKET, 'Empty command packet'),
        packet.sequenceId + 1,
      );
      return;
    }
    const command = packet.firstByte;
    const shape = replyShapeOf(command);
    if (shape === null) {
      // A command whose reply the proxy cannot follow (e.g. a binlog dump): from now on both
      // directions are relayed byte for byte; replies still in flight pass through unchanged.
      this.#phase = Phase.PIPE;
      this.#toBackend(raw);
      return;
    }
    if (shape !== ReplyShape.NONE) {
      this.#pending.push(
        new ReplyTracker(shape, (this.#capabilities & Capability.DEPRECATE_EOF) !== 0, command),
      );
    }
    this.#toBackend(raw);
    if (command === Command.QUIT) this.close();
  }

  #onHandshakeResponse(packet: FramedPacket, raw: Buffer): void {
    const payload = packet.payload!;
    const reply = packet.sequenceId + 1;
    if (isSslRequest(payload)) {
      this.#failClient(
        new ProxyError(
          ProxyErrorCode.TLS_NOT_OFFERED,
          'TLS was requested, but nicecache does not offer TLS yet',
        ),
        reply,
      );
      return;
    }
    const response = restrictHandshakeResponse(payload, this.#greeting!);
    if (response === null) {
      this.#failClient(new ProxyError(ProxyErrorCode.BAD_HANDSHAKE, 'Bad handshake'), reply);
      return;
    }
    this.#capabilities = response.capabilities;
    this.#phase = Phase.COMMANDS;
    this.#login = new ReplyTracker(ReplyShape.AUTH, false);
    this.#pending.push(this.#login);
    this.#toBackend(raw);
  }

  #toBackend(bytes: Buffer): void {
    if (!this.#backend.write(bytes)) this.#client.pause();
  }

  // --- backend → client ---------------------------------------------------------------------

  #onBackendData(chunk: Buffer): void {
    if (this.#phase === Phase.PIPE) {
      this.#toClient(chunk);
      return;
    }
    if (this.#phase === Phase.GREETING) {
      // The greeting is rewritten (capabilities), so it is sent packet by packet, not as read.
      this.#backendFramer.push(chunk);
      return;
    }
    this.#backendFramer.push(chunk);
    if (this.#phase === Phase.CLOSED) return;
    this.#toClient(chunk);
    // Closing waits until the chunk holding the last reply has been handed to the client.
    if (this.#closeAfterRelay) this.close();
  }

  #onBackendPacket(packet: FramedPacket): void {
    if (this.#phase === Phase.GREETING) {
      this.#onGreeting(packet);
      return;
    }
    if (this.#phase !== Phase.COMMANDS) return;
    const head = this.#pending[0];
    if (head === undefined) throw new Error(`backend sent ${packet.length} bytes nobody asked for`);
    if (!head.feedServer(packet)) return;
    this.#pending.shift();
    // A failed login ends the connection (the server closes its side too); a failed
    // COM_CHANGE_USER does not: the server keeps the previous user logged in.
    if (head === this.#login && head.failed) this.#closeAfterRelay = true;
    if (this.#draining && this.#pending.length === 0) this.#closeAfterRelay = true;
  }

  #onGreeting(packet: FramedPacket): void {
    const raw = packet.raw!;
    if (packet.firstByte === PacketHeader.ERR) {
      // The backend refused us before the handshake (too many connections, host blocked):
      // the client gets its words unchanged.
      this.#toClient(raw);
      this.close();
      return;
    }
    const greeting = restrictGreeting(packet.payload!);
    if (greeting === null) {
      this.#failClient(
        new ProxyError(
          ProxyErrorCode.BACKEND_UNREACHABLE,
          `The server at ${this.#describeBackend()} sent a greeting nicecache cannot read`,
        ),
        0,
      );
      return;
    }
    this.#backend.setTimeout(0);
    this.#greeting = greeting;
    this.#phase = Phase.HANDSHAKE_RESPONSE;
    this.#toClient(raw);
    this.#client.resume();
  }

  #toClient(bytes: Buffer): void {
    this.#sentToClient = true;
    if (!this.#client.write(bytes)) this.#backend.pause();
  }

  #onBackendError(error: NodeJS.ErrnoException): void {
    if (this.#phase === Phase.CLOSED) return;
    if (!this.#sentToClient) {
      const reason =
        error.code === 'ECONNREFUSED' ? '111 "Connection refused"' : `"${error.message}"`;
      this.#failClient(
        new ProxyError(
          ProxyErrorCode.BACKEND_UNREACHABLE,
          `Can't connect to server on '${this.#describeBackend()}' (${reason})`,
        ),
        0,
      );
      return;
    }
    this.#options.log.debug(`backend connection failed: ${error.message}`);
    this.close();
  }

  #onBackendClose(): void {
    if (this.#phase === Phase.CLOSED) return;
    if (!this.#sentToClient) {
      this.#failClient(
        new ProxyError(
          ProxyErrorCode.BACKEND_UNREACHABLE,
          `Lost connection to server on '${this.#describeBackend()}' before its greeting`,
        ),
        0,
      );
      return;
    }
    // Mid-reply or idle, the client sees its connection close, as it would with the server.
    this.close();
  }

  #describeBackend(): string {
    return `${this.#options.backend.host}:${this.#options.backend.port}`;
  }

  /** Sends the client an error of the proxy's own and closes the connection. */
  #failClient(error: ProxyError, sequenceId: number): void {
    if (this.#phase === Phase.CLOSED) return;
    this.#options.log.debug(`closing client: ${error.code}: ${error.message}`);
    this.#sentToClient = true;
    this.#client.write(encodeErr(error.toErrInfo(), sequenceId, this.#phase === Phase.GREETING));
    this.close();
  }

  /** An exception in a handler ends this session only; other sessions never notice. */
  #guard(handler: () => void): void {
    try {
      handler();
    } catch (error) {
      this.#options.log.warn(`session error, closing connection: ${(error as Error).message}`);
      this.close();
    }
  }
}
