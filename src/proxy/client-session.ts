/**
 * One client connection and its own backend connection (1:1).
 *
 * The backend authenticates the client itself: the proxy connects first, hands the client the
 * backend's greeting (and so its scramble), and relays the exchange. Afterwards every command is
 * forwarded at once (clients may pipeline), and a {@link ReplyTracker} per command follows the
 * backend's reply so the proxy always knows where each reply ends. Reply bytes are relayed as they
 * arrive, chunk by chunk, never re-encoded.
 *
 * With the query cache on, every client command goes through a {@link StatementRouter} first,
 * whatever its size or kind: a hit is answered from the cache, a miss is relayed while its reply
 * is copied, and writes mark the registry before they are sent. The proxy sometimes sends
 * commands of its own on the connection (the session probe, a replay before the client reads
 * diagnostics); client commands wait while one runs, and its reply is never relayed.
 *
 * Every way into a session (client and backend data, socket events, timers, the wake-up after a
 * single-flight wait) runs under {@link ClientSession.#guard}: an exception ends that session
 * only, never the worker and the other sessions on it.
 */
import type { Socket } from 'node:net';
import type { SecureContext } from 'node:tls';
import { ANSWER_SAMPLE_EVERY, Latency } from '../cache/cache-stats.ts';
import type { DigestRecord } from '../cache/statement-digests.ts';
import { statementIdOf } from '../protocol/command-fields.ts';
import {
  Capability,
  Command,
  MAX_PACKET_PAYLOAD,
  MariaDbCapability,
  PacketHeader,
  ServerStatus,
} from '../protocol/constants.ts';
import { ProxyError, ProxyErrorCode, backendUnreachableMessage } from '../protocol/errors.ts';
import { encodeErr } from '../protocol/generic-packets.ts';
import { encodePacket } from '../protocol/packet.ts';
import { CompressedPackets } from '../protocol/compressed-packets.ts';
import type { FramedPacket } from '../protocol/packet-framer.ts';
import { PacketFramer } from '../protocol/packet-framer.ts';
import { StartViews } from '../protocol/start-views.ts';
import {
  ReplyShape,
  ReplyTracker,
  TRACKER_INSPECT_LIMIT,
  replyShapeOf,
} from '../protocol/reply-tracker.ts';
import { readTextRows } from '../protocol/text-rows.ts';
import type { Logger } from './log.ts';
import { startClientTls, startServerTls } from '../protocol/tls-over-reads.ts';
import type { TlsOverReads } from '../protocol/tls-over-reads.ts';
import type { BackendAddress } from '../upstream/backend-address.ts';
import { NicecacheTables } from './nicecache-tables.ts';
import type { OwnTableRead } from './nicecache-tables.ts';
import type { RelayDigests } from './relay-digests.ts';
import { InFlightCommand } from './in-flight-command.ts';
import type { InternalKind } from './in-flight-command.ts';
import { LoginNegotiation } from './login-negotiation.ts';
import type { LoginRefusal } from './login-negotiation.ts';
import { ReplyCopy } from './reply-copy.ts';
import { StatementRouter, TransactionOutcome } from './statement-router.ts';
import type { CommandPlan, WorkerCache } from './statement-router.ts';
import { rewriteStatusReply } from './status-variables.ts';
import type { StatusRewrite, StatusValues } from './status-variables.ts';
import { statusValues } from './status-values.ts';
import { SESSION_STATUS_BITS } from './transaction-state.ts';
import {
  BACKEND_READ_SIZE,
  CLIENT_READ_SIZE,
  ReadBuffer,
  adoptReading,
  connectReading,
} from './socket-reads.ts';

export interface SessionOptions {
  backend: BackendAddress;
  /** Offered to clients that ask for TLS (CLIENT_SSL); null: the greeting does not offer it. */
  tls: SecureContext | null;
  /** A client that logs in without starting TLS is refused (--require-secure-transport). */
  requireSecureTransport?: boolean;
  /**
   * The client came on the --socket path: a secure transport as the server counts one (never
   * refused by --require-secure-transport), and named as the server names it, 'localhost'.
   */
  unixSocket?: boolean;
  log: Logger;
  /** How long a backend connection attempt may take before the client is told it failed. */
  connectTimeoutMs: number;
  /**
   * How long a client may take from the greeting to the end of its login. The backend
   * connection is held meanwhile: a client that never answers must not keep it for the server's
   * own connect_timeout, nor a port scanner pile them up.
   */
  handshakeTimeoutMs: number;
  /** The worker's query cache; null relays every command unchanged. */
  cache: WorkerCache | null;
  /**
   * The worker's per-statement digests for a session without the cache (the cache's router
   * counts its own); null or absent: none are kept (--digests off).
   */
  relayDigests?: RelayDigests | null;
  /** Told each time this session tells its client the server cannot be reached. */
  onBackendUnreachable?: () => void;
  /**
   * Told +1 when this session's client has left while writes it sent still run on the server
   * (their marks held until the server answers them or closes), and -1 when they are released.
   */
  onLinger?: (change: 1 | -1) => void;
}

/** Routed commands left before the next one whose answer is timed (see ANSWER_SAMPLE_EVERY). */
let answerSampleCountdown = ANSWER_SAMPLE_EVERY;

/** Without the cache no counter is the proxy's: only the connection's own rows are. */
const NO_STATUS_VALUES: StatusValues = { own: new Map(), extra: [] };

/** A BEGIN or COMMIT reply kept for answering later is one short OK packet. */
const LEARNED_REPLY_LIMIT = 64;

/** A client packet that arrived while the session holds commands back. */
interface HeldPacket {
  raw: Buffer;
  continuation: boolean;
}

/**
 * Bytes of held client packets up to which the client is still read. Reading on while commands
 * wait is how a client that leaves is noticed when what they wait for never comes: a server
 * that waits on the client itself (after a broken COM_CHANGE_USER, say) sees the client's end
 * when it is talked to directly, and must see it through the proxy too.
 */
const HELD_READ_LIMIT = 1024 * 1024;

const COM_QUIT = Buffer.from([1, 0, 0, 0, Command.QUIT]);

/** Commands the cache routes: they wait for the replies before them. */
const ROUTED_COMMANDS = new Set<number>([
  Command.QUERY,
  Command.STMT_PREPARE,
  Command.STMT_EXECUTE,
]);

/**
 * Why the client is not read. Reading resumes when no reason is left, so one that ends (the
 * backend drained) cannot resume reading another still holds back (a shutdown).
 */
const ClientPause = {
  /** Nothing is read from the client before the backend has greeted it. */
  GREETING: 1,
  /** Writes to the backend are queued: until its socket drains. */
  BACKEND_FULL: 2,
  /** Answers of the cache wait for the client to read them: until its socket drains. */
  ANSWERS_QUEUED: 4,
  /** Held packets past HELD_READ_LIMIT: until they are taken up. */
  HELD_FULL: 8,
  /** Shutting down: the commands already read are answered, no other is read. Never ends. */
  DRAINING: 16,
} as const;

const Phase = {
  /** Waiting for the backend's greeting. */
  GREETING: 0,
  /** Waiting for the client's HandshakeResponse41. */
  HANDSHAKE_RESPONSE: 1,
  /** Authentication exchange, then commands: both follow the reply queue. */
  COMMANDS: 2,
  CLOSED: 3,
} as const;
type Phase = (typeof Phase)[keyof typeof Phase];

export class ClientSession {
  /** The client as commands are read and answered: its TCP socket, or TLS over it. */
  #client: Socket;
  /** The client's TCP connection (the same as #client without TLS). */
  readonly #tcp: Socket;
  /** TLS to the client, once its SSLRequest came; its bytes are fed from the TCP reads. */
  #tls: TlsOverReads | null = null;
  readonly #backendReads: ReadBuffer;
  readonly #clientReads: ReadBuffer;
  /** The server as commands are written to it: its TCP socket, or TLS over it. */
  #backend: Socket;
  /** TLS to the server, once the proxy's SSLRequest went; its bytes are fed from the TCP reads. */
  #backendTls: TlsOverReads | null = null;
  /** The TLS handshake with the server has completed. */
  #backendSecure = false;
  /**
   * The compressed protocol with the client (CLIENT_COMPRESS), from the end of its login on; null:
   * plain packets. The proxy speaks it itself: the server's connection stays plain, so whatever a
   * hit or the proxy says goes to the client in the same packets as what the server says.
   */
  #compression: CompressedPackets | null = null;
  /** The login succeeded: compression starts once its last packet has been relayed. */
  #compressionStarts = false;
  /**
   * The sequence number the server expects of the client's next packet in an exchange within a
   * command (a LOCAL INFILE file, COM_CHANGE_USER's authentication). Compressing clients number
   * such packets from the compressed packets they read, which are not the server's: they are
   * renumbered.
   */
  #answerSequence = 0;
  /** The server asked the compressing client for more within the command now replied to. */
  #exchangeOpen = false;
  readonly #options: SessionOptions;
  #clientFramer: PacketFramer;
  readonly #backendFramer: PacketFramer;
  /** What the backend framer is framing now: the chunk a reply's copy notes packets of. */
  #backendChunk: Buffer = Buffer.alloc(0);
  /** Views of whole backend reads, relayed as read: one per length of the read buffer. */
  readonly #relayedReads = new StartViews(0);
  /** Replies still to come from the backend, oldest first. */
  readonly #pending: InFlightCommand[] = [];
  #phase: Phase = Phase.GREETING;
  /** The login's decisions: capabilities, TLS on either side, renumbering (login-negotiation.ts). */
  readonly #negotiation: LoginNegotiation;
  #sentToClient = false;
  #draining = false;
  /** The initial authentication exchange, whose failure ends the connection. */
  #login: ReplyTracker | null = null;
  /** Close once the chunk being relayed has been written: its last reply ends the session. */
  #closeAfterRelay = false;
  #onClose: (() => void) | null = null;
  /** The query cache's view of this session, from a successful login on. */
  #router: StatementRouter | null = null;
  /**
   * Client packets wait here while the proxy's own command runs, or while a command the cache
   * routes waits for the replies before it (a hit must not overtake them).
   */
  #held: HeldPacket[] = [];
  /** The bytes in #held: past HELD_READ_LIMIT the client is no longer read. */
  #heldBytes = 0;
  #holding = false;
  /** The ClientPause reasons in force: the client is read only when there is none. */
  #clientPauses: number = ClientPause.GREETING;
  /** The held packet being taken up now. */
  #replaying: HeldPacket | null = null;
  /** Set when the pending queue empties with packets held: they are taken up after the chunk. */
  #resumeHeld = false;
  /** The client is gone but announced writes still wait for their replies. */
  #lingering = false;
  /**
   * The reply awaited by a 16 MB+ command whose first packets reached the server and whose last
   * has not come from the client yet (null when none, or when the command has no reply).
   */
  #unfinished: InFlightCommand | null = null;
  /** The backend connection has closed (its 'close' event came). */
  #backendClosed = false;
  /** Where the registry records this backend connection for the main thread, or -1. */
  #recordedConnection = -1;
  /** The length of the client read being framed, or 0 outside a read's handler. */
  #readLength = 0;
  /** The client read being framed, or null outside a read's handler. */
  #readBuffer: Buffer | null = null;
  /** The backend is corked until the end of the client read being framed. */
  #corked = false;
  /** Where in the backend chunk being read the client's reply starts (see #onBackendData). */
  #relayFrom = -1;
  /** Runs from the greeting until the login's reply: see SessionOptions.handshakeTimeoutMs. */
  #handshakeTimer: ReturnType<typeof setTimeout> | null = null;
  /** Without the cache: the digests of the statements prepared on this session, by id. */
  #preparedDigests: Map<number, DigestRecord> | null = null;
  /** Without the cache: the nicecache schema's tables, once a statement read them. */
  #ownTables: NicecacheTables | null = null;
  /** Without the cache: the session's status flags, as the server's last reply left them. */
  #relayStatus: number = ServerStatus.AUTOCOMMIT;

  /**
   * `accepted` comes from a server listening with `pauseOnConnect`: the session reads it into a
   * buffer of its own (see socket-reads.ts).
   */
  constructor(accepted: Socket, options: SessionOptions) {
    this.#options = options;
    this.#negotiation = new LoginNegotiation({
      clientTls: options.tls !== null,
      backendTls: options.backend.tls ?? null,
      requireSecureTransport: options.requireSecureTransport === true,
      unixSocket: options.unixSocket === true,
      backendName: `${options.backend.host}:${options.backend.port}`,
    });
    const clientReads = new ReadBuffer(CLIENT_READ_SIZE);
    const backendReads = new ReadBuffer(BACKEND_READ_SIZE);
    const client = adoptReading(accepted, clientReads, (buffer, length) => {
      try {
        if (this.#tls !== null) this.#tls.feed(buffer, 0, length);
        else this.#onClientData(buffer, length);
      } catch (error) {
        this.#onHandlerError(error);
      }
    });
    this.#client = this.#tcp = client;
    this.#backendReads = backendReads;
    this.#clientReads = clientReads;
    this.#clientFramer = this.#newClientFramer();
    this.#backendFramer = new PacketFramer(
      (packet) => this.#onBackendPacket(packet),
      TRACKER_INSPECT_LIMIT,
    );

    client.setNoDelay(true);
    // Nothing is read from the client before the backend has greeted it (ClientPause.GREETING).
    client.pause();
    this.#watchClient(client);

    this.#backend = connectReading(
      { host: options.backend.host, port: options.backend.port, noDelay: true },
      backendReads,
      (buffer, length) => {
        try {
          if (this.#backendTls !== null) this.#backendTls.feed(buffer, 0, length);
          else this.#onBackendData(buffer, length);
        } catch (error) {
          this.#onHandlerError(error);
        }
      },
    );
    // Each side's reads are relayed to the other as views (see ReadBuffer).
    clientReads.writesTo = this.#backend;
    backendReads.writesTo = client;
    // Bounded until the greeting: a backend that accepts but never speaks must not hang clients.
    this.#backend.setTimeout(options.connectTimeoutMs, () =>
      this.#guard(() =>
        this.#backend.destroy(new Error(`no greeting within ${options.connectTimeoutMs} ms`)),
      ),
    );
    this.#watchBackendWrites(this.#backend);
    this.#backend.on('error', (error: NodeJS.ErrnoException) =>
      this.#guard(() => this.#onBackendError(error)),
    );
    this.#backend.on('close', () => this.#guard(() => this.#onBackendClose()));
  }

  /** The server's socket takes writes again (TCP, then TLS over it). */
  #watchBackendWrites(backend: Socket): void {
    backend.on('drain', () => this.#guard(() => this.#unpauseClient(ClientPause.BACKEND_FULL)));
  }

  /** What the session needs to hear from the client's socket (TCP, then TLS over it). */
  #watchClient(client: Socket): void {
    client.on('drain', () =>
      this.#guard(() => {
        this.#backend.resume();
        this.#unpauseClient(ClientPause.ANSWERS_QUEUED);
      }),
    );
    client.on('error', () => this.#guard(() => this.close()));
    client.on('close', () => this.#guard(() => this.close()));
  }

  /** A framer of client packets that stops as soon as another takes over (TLS started). */
  #newClientFramer(): PacketFramer {
    const framer: PacketFramer = new PacketFramer((packet) => {
      if (this.#clientFramer !== framer) return;
      const compression = this.#compression;
      // A command's last packet, not an answer to the server within one: the next command's
      // compressed packets are numbered from 0 (see CompressedPackets).
      if (
        compression !== null &&
        packet.length < MAX_PACKET_PAYLOAD &&
        this.#pending[0]?.tracker.awaitsClient !== true
      ) {
        compression.commandEnded();
      }
      this.#onClientPacket(packet);
    });
    return framer;
  }

  /** Called once, when both connections are gone. */
  set onClose(callback: () => void) {
    this.#onClose = callback;
  }

  /**
   * Stops reading commands and closes once the commands already read have their replies: those
   * in flight, and those held (waiting for the replies before them, or for an identical miss).
   */
  drain(): void {
    this.#guard(() => {
      this.#draining = true;
      this.#pauseClient(ClientPause.DRAINING);
      if (this.#phase !== Phase.COMMANDS || this.#idle()) this.close();
    });
  }

  /** Nothing the client sent is left to answer. */
  #idle(): boolean {
    return this.#pending.length === 0 && this.#held.length === 0;
  }

  #pauseClient(reason: number): void {
    if (this.#clientPauses === 0) this.#client.pause();
    this.#clientPauses |= reason;
  }

  #unpauseClient(reason: number): void {
    if ((this.#clientPauses & reason) === 0) return;
    this.#clientPauses &= ~reason;
    if (this.#clientPauses === 0) this.#client.resume();
  }

  close(): void {
    if (this.#phase === Phase.CLOSED) return;
    this.#endHandshakeTimer();
    // Before the unfinished command goes: a server waiting for its rest must not read a COM_QUIT.
    const wasIdle = this.#pending.length === 0;
    this.#phase = Phase.CLOSED;
    // Not yet answered (a server may answer a packet too large before reading the rest of it).
    const unfinished = this.#unfinished === null ? -1 : this.#pending.indexOf(this.#unfinished);
    if (unfinished >= 0) {
      // The client left in the middle of a 16 MB+ command: the server holds its first packets
      // and waits for the rest, which will never come, so the command can never run. Its marks
      // go now; lingering for them would keep the server waiting until its net_read_timeout,
      // and an everything-mark would stop every hit of every worker until then.
      const { plan } = this.#pending.splice(unfinished, 1)[0]!;
      if (plan !== null) this.#router?.abandon([plan]);
    }
    this.#unfinished = null;
    // Flush what the client is owed, then close.
    this.#client.destroySoon();
    if (
      this.#router !== null &&
      !this.#backendClosed &&
      this.#pending.some((pending) => pending.plan?.marks)
    ) {
      // Writes announced to the registry: the server runs them to the end whether or not the
      // client waits, so their marks stay until their replies come or the server closes the
      // connection. No timer: a write stuck behind a lock may commit minutes later, and a
      // result stored before that would be stale. Holding marks only costs misses.
      this.#lingering = true;
      this.#options.onLinger?.(1);
      this.#backend.resume();
      // The server reads the client's end after the commands it was sent, as it would have
      // directly: one that waits on the client instead of answering (in a broken
      // COM_CHANGE_USER exchange, say) closes the connection rather than waiting forever.
      this.#backend.end();
    } else {
      this.#router?.onClose(this.#unansweredPlans());
      if (wasIdle && this.#backend.writable && !this.#backend.connecting) {
        // A polite COM_QUIT, so the server does not count an aborted connection.
        this.#backend.end(COM_QUIT);
      } else {
        this.#backend.destroy();
      }
    }
    const onClose = this.#onClose;
    this.#onClose = null;
    onClose?.();
  }

  #unansweredPlans(): CommandPlan[] {
    const plans: CommandPlan[] = [];
    for (const pending of this.#pending) if (pending.plan !== null) plans.push(pending.plan);
    return plans;
  }

  #finishLinger(): void {
    if (!this.#lingering) return;
    this.#lingering = false;
    this.#router?.onClose(this.#unansweredPlans());
    this.#pending.length = 0;
    this.#backend.destroy();
    this.#options.onLinger?.(-1);
  }

  // --- client → backend ---------------------------------------------------------------------

  #onClientData(buffer: Buffer, length: number): void {
    const compression = this.#compression;
    if (compression === null) {
      this.#onClientBytes(buffer, length);
      return;
    }
    try {
      compression.read(buffer, length, this.#onClientBytes);
    } catch (error) {
      if (!(error instanceof ProxyError)) throw error;
      this.#failClient(error, 0);
    }
  }

  /** Bytes of the client's packets: a read, or what a compressed packet of one carried. */
  readonly #onClientBytes = (buffer: Buffer, length: number): void => {
    this.#readLength = length;
    this.#readBuffer = buffer;
    try {
      this.#clientFramer.push(buffer, length);
    } finally {
      this.#readLength = 0;
      this.#readBuffer = null;
      if (this.#corked) {
        this.#corked = false;
        this.#backend.uncork();
      }
    }
  };

  /**
   * Commands pipelined in one read go to the backend in one write: the backend is corked when a
   * packet is forwarded with more of the read after it. A hit forwards nothing and a lone
   * command is written at once: neither pays for cork and uncork.
   */
  #corkIfMore(packet: FramedPacket): void {
    if (!this.#corked && packet.end < this.#readLength) {
      this.#corked = true;
      this.#backend.cork();
    }
  }

  #onClientPacket(packet: FramedPacket): void {
    // No view of the packet's bytes is made before it is known to be needed: a hit needs none.
    switch (this.#phase) {
      case Phase.HANDSHAKE_RESPONSE:
        this.#onHandshakeResponse(packet, packet.raw!);
        return;
      case Phase.COMMANDS:
        break;
      default:
        return;
    }
    const pending = this.#pending;
    const head = pending[0]?.tracker;
    if (!this.#holding && (packet.continuation || head?.awaitsClient)) {
      // The rest of a 16 MB+ command (routed with its first packet), a LOCAL INFILE file (the
      // LOAD DATA announced its writes), or the answer to the server's authentication request.
      const answering = this.#compression !== null && head?.awaitsClient === true;
      head?.feedClient(packet);
      if (packet.length < MAX_PACKET_PAYLOAD) this.#unfinished = null;
      this.#corkIfMore(packet);
      const raw = packet.raw!;
      const shift = this.#negotiation.shift;
      if (shift !== 0) raw[3] = (raw[3]! - shift) & 0xff;
      else if (answering) {
        raw[3] = this.#answerSequence;
        this.#answerSequence = (this.#answerSequence + 1) & 0xff;
      }
      this.#toBackend(raw);
      return;
    }
    // While a login or COM_CHANGE_USER is under way, whatever the client sends next is either
    // the answer the server will ask for or a command the server reads after the exchange: it
    // waits until the server has said which (never relayed as auth data the server would run).
    if (this.#holding || pending[pending.length - 1]?.tracker.authenticating) {
      this.#hold(packet.raw!, packet.continuation);
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
    // A command byte the proxy does not know is relayed and its reply taken as one packet: the
    // server answers every command it does not know with ER_UNKNOWN_COM_ERROR (1047, 08S01,
    // "Unknown command") and reads the next one; the router announces it as a write of
    // everything. A server that answers otherwise desynchronises the tracker, which ends the
    // session (its marks are then released after bumping). No byte pipe: every later command is
    // routed like any other.
    const shape = replyShapeOf(command) ?? ReplyShape.SINGLE;
    let plan: CommandPlan | null = null;
    // A forward may carry a payload of its own (an execution given the types it omitted).
    let replacement: Buffer | null = null;
    let opened = false;
    let digest: DigestRecord | null = null;
    let prepares = false;
    // Without the cache: a status read whose rows of the client's own connection are rewritten.
    let relayStatus: StatusRewrite | null = null;
    const relayDigests = this.#options.relayDigests ?? null;
    if (relayDigests !== null && this.#router === null) {
      if (command === Command.QUERY && packet.length < MAX_PACKET_PAYLOAD) {
        const payload = packet.payload!;
        digest = relayDigests.knownShapeOf(payload, 1);
        if (digest === null) {
          const entry = relayDigests.statementOf(
            payload,
            1,
            this.#negotiation.greeting!.serverVersion,
          );
          digest = relayDigests.recordOf(entry);
          const control = entry.info.control;
          if (control?.kind === 'nicecache-table') {
            this.#answerOwnTable(control, packet, digest);
            return;
          }
          // A text of another shape (they have none): never found by knownShapeOf.
          if (control?.kind === 'show-status' || control?.kind === 'status-table') {
            relayStatus = { statement: control, binary: false };
          }
        }
      } else {
        digest = this.#relayedStatement(command, packet, relayDigests);
        prepares = command === Command.STMT_PREPARE;
      }
      if (digest !== null && !prepares) digest.count++;
    } else if (this.#router !== null) {
      if (this.#pending.length > 0 && ROUTED_COMMANDS.has(command)) {
        // Whether the cache answers depends on the replies before it: wait for them.
        this.#hold(packet.raw!, false);
        return;
      }
      // One routed command in ANSWER_SAMPLE_EVERY is timed, should the proxy answer it.
      const timedFrom =
        --answerSampleCountdown === 0
          ? ((answerSampleCountdown = ANSWER_SAMPLE_EVERY), performance.now())
          : -1;
      // The first packet of a 16 MB+ command is routed too, without its continuations.
      const route =
        packet.length < MAX_PACKET_PAYLOAD
          ? this.#router.route(packet.payload!)
          : this.#router.routeUnassembled(packet.payload!);
      // A COMMIT the proxy answered earlier reaches the server before whatever goes there next.
      if (route.action !== 'answer' && route.action !== 'wait') {
        const owed = this.#router.takeOwedCommit();
        if (owed !== null) {
          opened = true;
          this.#backend.cork();
          this.#sendAhead(owed);
        }
      }
      switch (route.action) {
        case 'answer':
          this.#answer(route.bytes);
          if (timedFrom >= 0) {
            const seconds = (performance.now() - timedFrom) / 1000;
            this.#options.cache!.cache.stats.observe(Latency.ANSWER, seconds);
          }
          return;
        case 'probe':
          this.#sendInternal('probe', Buffer.from(route.sql, 'utf8'));
          if (opened) this.#backend.uncork();
          this.#hold(packet.raw!, false);
          return;
        case 'wait': {
          // An identical miss is on its way (its reply will likely be a hit for this one too),
          // or the schema metadata is being reloaded after DDL.
          this.#hold(packet.raw!, false);
          route.flight.wait(
            () =>
              this.#guard(() => {
                if (this.#phase === Phase.COMMANDS && this.#pending.length === 0) this.#resume();
              }),
            route.maxWaitMs,
          );
          return;
        }
        case 'replay':
        case 'transaction':
          this.#sendInternal(route.action, route.payload);
          if (opened) this.#backend.uncork();
          this.#hold(packet.raw!, false);
          return;
        case 'forward':
          plan = route.plan;
          if (route.payload !== undefined) {
            replacement = encodePacket(route.payload, packet.sequenceId);
          }
          if (route.opening !== undefined) {
            // All in one write: corks nest, so this holds inside a corked read too.
            if (!opened) this.#backend.cork();
            opened = true;
            this.#sendAhead(route.opening);
          }
      }
    }
    if (shape !== ReplyShape.NONE) {
      const awaited = InFlightCommand.client(
        new ReplyTracker(shape, this.#deprecateEof, command),
        plan,
        plan?.fill
          ? new ReplyCopy(this.#options.cache!.cache.limitBytes)
          : plan?.learn
            ? new ReplyCopy(LEARNED_REPLY_LIMIT)
            : null,
        plan?.status ?? relayStatus,
        digest,
        prepares,
      );
      this.#pending.push(awaited);
      if (packet.length === MAX_PACKET_PAYLOAD) this.#unfinished = awaited;
      // Nothing else may reach the backend until a reply to rewrite is complete.
      if (awaited.rewrite) this.#holding = true;
    }
    this.#corkIfMore(packet);
    this.#toBackend(replacement ?? packet.raw!);
    if (opened) this.#backend.uncork();
    if (command === Command.QUIT) this.close();
  }

  get #deprecateEof(): boolean {
    return (this.#negotiation.capabilities & Capability.DEPRECATE_EOF) !== 0;
  }

  /**
   * Sends the COMMIT the proxy answered for the client (see StatementRouter.takeOwedCommit)
   * when no command has carried it: the server's transaction would otherwise keep its read
   * view and metadata locks while the session is idle. Called on a timer (OwedCommits); says
   * whether the COMMIT is still owed (the session was busy: it is asked again later).
   */
  readonly #flushOwedCommit = (): boolean => {
    const router = this.#router;
    if (router === null || !router.owesCommit || this.#phase === Phase.CLOSED) return false;
    if (this.#phase !== Phase.COMMANDS || this.#pending.length > 0 || this.#holding) return true;
    this.#guard(() => this.#sendInternal('transaction', router.takeOwedCommit()!));
    return false;
  };

  /**
   * A transaction command of the proxy's own right before the command it precedes (a start, or
   * a COMMIT owed), without waiting for its reply: the command follows in the same write.
   */
  #sendAhead(payload: Buffer): void {
    this.#pending.push(
      InFlightCommand.own(
        'transaction',
        new ReplyTracker(ReplyShape.RESULT, this.#deprecateEof, Command.QUERY),
      ),
    );
    this.#toBackend(encodePacket(payload, 0));
  }

  /** Sends a command of the proxy's own; client commands wait until its reply is in. */
  #sendInternal(kind: InternalKind, payload: Buffer): void {
    this.#pending.push(
      InFlightCommand.own(
        kind,
        new ReplyTracker(ReplyShape.RESULT, this.#deprecateEof, payload[0] ?? Command.QUERY),
      ),
    );
    this.#holding = true;
    const command =
      kind === 'probe' ? Buffer.concat([Buffer.from([Command.QUERY]), payload]) : payload;
    this.#toBackend(encodePacket(command, 0));
  }

  #hold(raw: Buffer, continuation: boolean): void {
    this.#holding = true;
    this.#heldBytes += raw.length;
    if (this.#heldBytes > HELD_READ_LIMIT) this.#pauseClient(ClientPause.HELD_FULL);
    if (this.#replaying?.raw === raw) {
      // A held packet that must wait again keeps its place at the front.
      this.#held.unshift(this.#replaying);
      this.#replaying = null;
      return;
    }
    this.#held.push({ raw: Buffer.from(raw), continuation });
  }

  /** Takes up held packets once nothing the cache waits for is in flight. */
  #resume(): void {
    this.#holding = false;
    this.#backend.cork();
    try {
      while (!this.#holding && this.#phase === Phase.COMMANDS) {
        const next = this.#held.shift();
        if (next === undefined) break;
        this.#replaying = next;
        const { raw, continuation } = next;
        this.#heldBytes -= raw.length;
        const length = raw.readUIntLE(0, 3);
        this.#onClientPacket({
          sequenceId: raw[3]!,
          length,
          continuation,
          firstByte: length > 0 ? raw[4]! : -1,
          payload: raw.subarray(4),
          raw,
          end: raw.length,
        });
        this.#replaying = null;
      }
    } finally {
      this.#backend.uncork();
    }
    if (this.#draining && this.#phase === Phase.COMMANDS && this.#idle()) {
      // The last held command was answered by the cache: nothing more is owed.
      this.close();
      return;
    }
    if (this.#heldBytes <= HELD_READ_LIMIT) this.#unpauseClient(ClientPause.HELD_FULL);
  }

  /** An answer of the cache's own: the client gets it at once, nothing reaches the server. */
  #answer(bytes: Buffer): void {
    this.#sentToClient = true;
    const client = this.#client;
    const drained = this.#writeClient(bytes);
    // A hit's bytes are the cache's own memory: still queued, they must not be reused yet
    // (compressed, what is queued is a copy).
    if (client.writableLength > 0 && this.#compression === null) {
      this.#router?.pinIfQueued(bytes, client);
    }
    if (!drained) this.#pauseClient(ClientPause.ANSWERS_QUEUED);
  }

  /**
   * The client's SSLRequest: TLS starts on the client connection. The handshake response comes
   * inside it, numbered one past the SSLRequest, which the server never sees: the login's
   * packets are renumbered both ways (LoginNegotiation.shift) until it ends.
   */
  #startTls(context: SecureContext, packet: FramedPacket): void {
    // The SSLRequest came in a read of the TCP socket: what follows it there is TLS already.
    const tls = startClientTls(this.#tcp, context, this.#readBuffer!, packet.end, this.#readLength);
    this.#tls = tls;
    this.#clientFramer = this.#newClientFramer();
    const secure = tls.socket;
    this.#client = secure;
    this.#backendReads.writesTo = secure;
    this.#watchClient(secure);
    secure.on('data', (chunk: Buffer) =>
      this.#guard(() => this.#onClientData(chunk, chunk.length)),
    );
  }

  #onHandshakeResponse(packet: FramedPacket, raw: Buffer): void {
    const payload = packet.payload!;
    const step = this.#negotiation.respond(payload, raw, packet.sequenceId, clientHost(this.#tcp));
    if (step.action === 'refuse') {
      this.#refuseLogin(step.refusal);
      return;
    }
    if (step.action === 'start-tls') {
      this.#startTls(this.#options.tls!, packet);
      return;
    }
    this.#phase = Phase.COMMANDS;
    this.#login = new ReplyTracker(ReplyShape.AUTH, false);
    this.#pending.push(InFlightCommand.client(this.#login, null, null));
    if (step.serverTls) {
      this.#startServerTls(payload);
      // A copy: it waits in TLS until the handshake is done, and `raw` is in the read buffer.
      this.#toBackend(Buffer.from(raw));
    } else {
      this.#toBackend(raw);
    }
  }

  /** A login the proxy ends with an error of its own (see LoginNegotiation). */
  #refuseLogin(refusal: LoginRefusal): void {
    // Nothing more goes to the server, which would read it as a login.
    if (refusal.closeBackend) this.#backend.destroy();
    this.#failClient(refusal.error, refusal.sequenceId);
  }

  /**
   * The proxy's SSLRequest to the server (the first 32 bytes of the client's handshake response,
   * CLIENT_SSL set), then TLS on the server connection: everything after goes inside it.
   */
  #startServerTls(response: Buffer): void {
    const serverTls = this.#options.backend.tls!;
    const tcp = this.#backend;
    tcp.write(encodePacket(response.subarray(0, 32), 1));
    const tls = startServerTls(tcp, {
      ca: serverTls.ca,
      verify: serverTls.verify,
      host: this.#options.backend.host,
    });
    this.#backendTls = tls;
    const secure = tls.socket;
    this.#backend = secure;
    this.#clientReads.writesTo = secure;
    this.#watchBackendWrites(secure);
    secure.on('secureConnect', () => {
      this.#backendSecure = true;
    });
    secure.on('data', (chunk: Buffer) =>
      this.#guard(() => this.#onBackendData(chunk, chunk.length)),
    );
    secure.on('error', (error: Error) =>
      this.#guard(() => {
        if (this.#backendSecure) {
          this.#onBackendError(error);
          return;
        }
        this.#failClient(
          new ProxyError(
            ProxyErrorCode.BACKEND_UNREACHABLE,
            `TLS to the server at ${this.#describeBackend()} failed: ${error.message}`,
          ),
          this.#negotiation.replySequence,
        );
      }),
    );
  }

  #toBackend(bytes: Buffer): void {
    if (!this.#backend.write(bytes)) this.#pauseClient(ClientPause.BACKEND_FULL);
  }

  // --- backend → client ---------------------------------------------------------------------

  #onBackendData(buffer: Buffer, length: number): void {
    if (this.#phase === Phase.GREETING) {
      // The greeting is rewritten (capabilities), so it is sent packet by packet, not as read.
      this.#backendFramer.push(buffer, length);
      return;
    }
    // A reply of the proxy's own, or one to be rewritten, is never relayed as read. Such a reply
    // is alone on the connection (everything else waits), except a transaction's start sent
    // with the command after it: the rest of the chunk from where the start's reply ends is
    // the command's (#relayFrom).
    const head = this.#pending[0];
    // A login renumbered for TLS is relayed packet by packet (#onBackendPacket), not as read.
    const relay =
      this.#negotiation.shift === 0 &&
      (head === undefined || (head.internal === null && !head.rewrite));
    this.#backendChunk = buffer;
    this.#backendFramer.push(buffer, length);
    // The buffer is read into again next time: a copy in progress takes what it noted of it.
    this.#pending[0]?.copy?.flush();
    if (this.#phase === Phase.CLOSED) return;
    if (relay) this.#toClient(this.#relayedReads.of(buffer, length));
    else if (this.#relayFrom >= 0) {
      const from = this.#relayFrom;
      this.#relayFrom = -1;
      if (from < length) this.#toClient(buffer.subarray(from, length));
    }
    if (this.#compressionStarts) {
      // The login's last packet (its OK) has gone as it is: what follows is compressed.
      this.#compressionStarts = false;
      this.#compression = new CompressedPackets(true);
    }
    // Closing waits until the chunk holding the last reply has been handed to the client.
    if (this.#closeAfterRelay) {
      this.close();
      return;
    }
    if (this.#resumeHeld) {
      this.#resumeHeld = false;
      this.#resume();
    }
  }

  #onBackendPacket(packet: FramedPacket): void {
    if (this.#phase === Phase.GREETING) {
      this.#onGreeting(packet);
      return;
    }
    if (this.#phase !== Phase.COMMANDS && !this.#lingering) return;
    if (this.#negotiation.shift !== 0) this.#relayRenumbered(packet);
    const pending = this.#pending[0];
    if (pending === undefined) {
      // The server speaks unasked only to say why it ends the connection: a command whose
      // packet was out of sequence ("Got packets out of order", 1156, even for a command that
      // has no reply), a shutdown. The client gets its words unchanged, then the close.
      this.#options.log.debug(`backend sent ${packet.length} bytes unasked; closing after them`);
      this.#closeAfterRelay = true;
      return;
    }
    const tracker = pending.tracker;
    const done = tracker.feedServer(packet);
    if (this.#compression !== null && !done && tracker.awaitsClient) {
      this.#answerSequence = (packet.sequenceId + 1) & 0xff;
      this.#compression.answerNext();
      this.#exchangeOpen = true;
    }
    if (pending.copy !== null) pending.copy.append(packet, this.#backendChunk, tracker.statusAt);
    if (pending.packets !== null && !packet.continuation && packet.raw !== null) {
      pending.packets.push(Buffer.from(packet.raw));
    }
    if (!done) {
      // The server asked the client (auth data, a LOCAL INFILE file): the packets the client
      // sent before are the answer, in order, as the server will read them.
      if (this.#held.length > 0 && tracker.awaitsClient) this.#resumeHeld = true;
      return;
    }
    this.#pending.shift();
    if (this.#exchangeOpen) {
      // The client's part of the command is over: its next command is numbered from 0.
      this.#exchangeOpen = false;
      this.#compression?.commandEnded();
    }
    this.#onReplyEnd(pending);
    if (pending.internal === 'transaction') {
      const next = this.#pending[0];
      if (next !== undefined && next.internal === null && !next.rewrite)
        this.#relayFrom = packet.end;
    }
    if (this.#lingering) {
      if (!this.#pending.some((other) => other.plan?.marks)) this.#finishLinger();
      return;
    }
    // A failed login ends the connection (the server closes its side too); a failed
    // COM_CHANGE_USER does not: the server keeps the previous user logged in.
    if (tracker === this.#login) {
      const negotiation = this.#negotiation;
      negotiation.shift = 0;
      this.#endHandshakeTimer();
      if (tracker.failed) this.#closeAfterRelay = true;
      else this.#compressionStarts = negotiation.compressionAsked;
      if (!tracker.failed && this.#options.cache !== null) {
        this.#router = new StatementRouter(
          this.#options.cache,
          negotiation.greeting!.serverVersion,
          negotiation.capabilities,
          negotiation.mariaDbCapabilities,
          tracker.status,
          this.#flushOwedCommit,
        );
      }
    }
    if (this.#pending.length === 0) {
      // Draining, held commands are still owed their answers: they are taken up first.
      if (this.#draining && this.#held.length === 0) this.#closeAfterRelay = true;
      if (this.#held.length > 0 || this.#holding) this.#resumeHeld = true;
    }
  }

  /** A login packet to a TLS client: numbered one further, past the SSLRequest. */
  #relayRenumbered(packet: FramedPacket): void {
    const raw = packet.raw;
    if (raw === null) {
      this.#failClient(
        new ProxyError(
          ProxyErrorCode.BAD_HANDSHAKE,
          'The login sent a packet too large to renumber',
        ),
        0,
      );
      return;
    }
    const copy = Buffer.from(raw);
    copy[3] = (copy[3]! + this.#negotiation.shift) & 0xff;
    this.#toClient(copy);
  }

  /** A reply has ended: the cache hears of it, and the proxy's own replies are used. */
  #onReplyEnd(pending: InFlightCommand): void {
    const router = this.#router;
    if (router === null) {
      if (pending.tracker.status >= 0) this.#relayStatus = pending.tracker.status;
      if (pending.digest !== null) this.#relayedReplyEnd(pending);
      if (pending.rewrite && !this.#lingering) this.#sendRewritten(pending);
      return;
    }
    const { tracker, plan } = pending;
    if (pending.internal === 'probe') {
      const payloads = pending.packets!.map((raw) => raw.subarray(4));
      router.acceptProbe(
        tracker.failed ? undefined : readTextRows(payloads, this.#deprecateEof)[0],
      );
      return;
    }
    if (pending.internal === 'transaction') {
      const outcome = router.acceptTransactionReply(tracker, pending.packets![0] ?? null);
      const next = this.#pending[0];
      if (outcome === TransactionOutcome.DISCARD_NEXT && next !== undefined) {
        next.internal = 'discard';
        next.copy?.abandon();
        next.copy = null;
      }
      return;
    }
    if (pending.internal === 'discard') {
      const { answer, rollback } = router.acceptDiscarded(plan, tracker);
      if (rollback !== null) this.#sendInternal('transaction', rollback);
      // Never left without a reply: with nothing to say, the connection ends.
      if (answer.length > 0) this.#answer(answer);
      else this.close();
      return;
    }
    if (pending.internal !== null || plan === null) return;
    if (pending.copy !== null) {
      if (plan.fill !== null) {
        router.store(plan.fill, tracker, pending.copy);
        pending.copy.abandon();
      } else if (tracker.failed) {
        pending.copy.abandon();
      } else {
        router.learn(plan, pending.copy.finish());
      }
    }
    router.onReply(plan, tracker);
    if (pending.rewrite && !this.#lingering) this.#sendRewritten(pending);
  }

  /**
   * Without the cache, the digest of a command other than COM_QUERY (see RelayDigests): a
   * prepared statement's, for its executions; null for what is not a statement's execution.
   * Statements closed, or dropped with the session's state, are forgotten.
   */
  #relayedStatement(
    command: number,
    packet: FramedPacket,
    relayDigests: RelayDigests,
  ): DigestRecord | null {
    switch (command) {
      case Command.STMT_PREPARE:
        return packet.length < MAX_PACKET_PAYLOAD
          ? relayDigests.recordOf(
              relayDigests.statementOf(
                packet.payload!,
                1,
                this.#negotiation.greeting!.serverVersion,
              ),
            )
          : null;
      case Command.STMT_EXECUTE:
        return this.#preparedDigests?.get(statementIdOf(packet.payload!)) ?? null;
      case Command.STMT_CLOSE:
        this.#preparedDigests?.delete(statementIdOf(packet.payload!));
        return null;
      case Command.CHANGE_USER:
      case Command.RESET_CONNECTION:
        this.#preparedDigests?.clear();
        return null;
      default:
        return null;
    }
  }

  /** Without the cache, a counted command's reply has ended: its time, or its statement id. */
  #relayedReplyEnd(pending: InFlightCommand): void {
    const { tracker, digest } = pending;
    if (!pending.prepares) {
      digest!.addServerTime((performance.now() - pending.sentAt) * 1000);
    } else if (!tracker.failed) {
      (this.#preparedDigests ??= new Map()).set(tracker.statementId, digest!);
    }
  }

  /**
   * Without the cache, a statement over the nicecache schema (see NicecacheTables): answered by
   * the proxy after the replies to the commands before it, once every worker's digests are in.
   */
  #answerOwnTable(read: OwnTableRead, packet: FramedPacket, digest: DigestRecord): void {
    if (this.#pending.length > 0) {
      // Taken up again once those replies have ended.
      this.#hold(packet.raw!, false);
      return;
    }
    this.#ownTables ??= new NicecacheTables(this.#options.relayDigests!.gather);
    const answer = this.#ownTables.answer(read, {
      deprecateEof: this.#deprecateEof,
      extendedMetadata:
        (this.#negotiation.mariaDbCapabilities & MariaDbCapability.EXTENDED_METADATA) !== 0,
      status: this.#relayStatus & SESSION_STATUS_BITS,
    });
    if (answer.action === 'answer') {
      // Counted once answered, as the cache's sessions count it.
      digest.count++;
      this.#answer(answer.bytes);
      return;
    }
    this.#hold(packet.raw!, false);
    answer.flight.wait(
      () =>
        this.#guard(() => {
          if (this.#phase === Phase.COMMANDS && this.#pending.length === 0) this.#resume();
        }),
      answer.maxWaitMs,
    );
  }

  /**
   * SHOW STATUS: the server's reply with the cache's counters in it (with the cache), and the
   * rows of the client's own connection, TLS and compression: the server's tell of the proxy's,
   * which --backend-tls may encrypt whether or not the client's is, and which is never
   * compressed.
   */
  #sendRewritten(pending: InFlightCommand): void {
    const packets = pending.packets!;
    const cache = this.#options.cache;
    const values =
      cache === null ? NO_STATUS_VALUES : statusValues(cache.cache, cache.followerStatus);
    const own = new Map(values.own);
    const tls = this.#tls?.socket ?? null;
    own.set('SSL_CIPHER', tls?.getCipher()?.name ?? '');
    own.set('SSL_VERSION', tls?.getProtocol() ?? '');
    own.set('COMPRESSION', this.#compression === null ? 'OFF' : 'ON');
    const rewritten = rewriteStatusReply(
      packets.map((raw) => raw.subarray(4)),
      this.#deprecateEof,
      pending.status!,
      { own, extra: values.extra, sessionLess: this.#router?.ownStatusLess() },
    );
    this.#toClient(rewritten ?? Buffer.concat(packets));
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
    const refusal = this.#negotiation.greet(packet.payload!);
    if (refusal !== null) {
      this.#refuseLogin(refusal);
      return;
    }
    this.#backend.setTimeout(0);
    const greeting = this.#negotiation.greeting!;
    // Should this worker die, the main thread ends this connection before releasing its marks.
    const registry = this.#options.cache?.cache.registry;
    if (registry !== undefined)
      this.#recordedConnection = registry.recordConnection(greeting.connectionId);
    this.#phase = Phase.HANDSHAKE_RESPONSE;
    this.#toClient(raw);
    this.#unpauseClient(ClientPause.GREETING);
    this.#handshakeTimer = setTimeout(
      () => this.#guard(() => this.#onHandshakeTimeout()),
      this.#options.handshakeTimeoutMs,
    );
  }

  /** The client did not log in in time: both connections go at once, as the server would do. */
  #onHandshakeTimeout(): void {
    this.#handshakeTimer = null;
    this.#options.log.warn(
      `handshake timeout: client ${this.#tcp.remoteAddress}:${this.#tcp.remotePort} did not log in within ${this.#options.handshakeTimeoutMs} ms`,
    );
    // Destroyed first, so close() sends the server nothing it would read as a handshake.
    this.#backend.destroy();
    this.#client.destroy();
    this.close();
  }

  #endHandshakeTimer(): void {
    if (this.#handshakeTimer === null) return;
    clearTimeout(this.#handshakeTimer);
    this.#handshakeTimer = null;
  }

  #toClient(bytes: Buffer): void {
    this.#sentToClient = true;
    if (!this.#writeClient(bytes)) this.#backend.pause();
  }

  /** Bytes to the client: as they are, or in compressed packets once its login set them up. */
  #writeClient(bytes: Buffer): boolean {
    const compression = this.#compression;
    return this.#client.write(compression === null ? bytes : compression.wrap(bytes));
  }

  #onBackendError(error: NodeJS.ErrnoException): void {
    if (this.#lingering) this.#finishLinger();
    if (this.#phase === Phase.CLOSED) return;
    if (!this.#sentToClient) {
      this.#failClient(
        new ProxyError(
          ProxyErrorCode.BACKEND_UNREACHABLE,
          backendUnreachableMessage(this.#describeBackend(), error),
        ),
        0,
      );
      return;
    }
    this.#options.log.debug(`backend connection failed: ${error.message}`);
    this.close();
  }

  #onBackendClose(): void {
    this.#backendClosed = true;
    if (this.#recordedConnection >= 0) {
      this.#options.cache!.cache.registry.forgetConnection(this.#recordedConnection);
      this.#recordedConnection = -1;
    }
    if (this.#lingering) this.#finishLinger();
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
    if (error.code === ProxyErrorCode.BACKEND_UNREACHABLE) this.#options.onBackendUnreachable?.();
    this.#sentToClient = true;
    this.#writeClient(encodeErr(error.toErrInfo(), sequenceId));
    this.close();
  }

  /** An exception in a handler ends this session only; other sessions never notice. */
  #guard(handler: () => void): void {
    try {
      handler();
    } catch (error) {
      this.#onHandlerError(error);
    }
  }

  #onHandlerError(error: unknown): void {
    this.#options.log.warn(`session error, closing connection: ${(error as Error).message}`);
    try {
      this.close();
    } catch (closeError) {
      // Closing itself failed half-way: drop both connections; the server rolls back.
      this.#options.log.warn(`session close failed: ${(closeError as Error).message}`);
      this.#client.destroy();
      this.#backend.destroy();
    }
  }
}

/**
 * The client's host as a server with skip_name_resolve names it in errors: its address, an IPv4
 * client on a dual-stack listener without its IPv6 prefix.
 */
function clientHost(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
