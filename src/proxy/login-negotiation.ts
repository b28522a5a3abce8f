/**
 * What the proxy decides while a client logs in, apart from the sockets: which capabilities the
 * server's greeting offers the client, what the client's handshake response becomes on its way
 * to the server, whether the login goes inside TLS on either side and how its packets are
 * renumbered for that, and the errors of the proxy's own a login can end with. The session
 * (client-session.ts) moves the bytes and starts TLS where this says so; once the login's reply
 * has ended, what was settled here (capabilities, compression) is what its commands use.
 */
import { Capability } from '../protocol/constants.ts';
import { ProxyError, ProxyErrorCode } from '../protocol/errors.ts';
import {
  isSslRequest,
  offerCapability,
  parseGreeting,
  restrictGreeting,
  restrictHandshakeResponse,
} from '../protocol/handshake.ts';
import type { Greeting } from '../protocol/handshake.ts';

/** What the proxy was told to offer and require of a login. */
export interface LoginPolicy {
  /** TLS is offered to the client (a certificate is loaded). */
  clientTls: boolean;
  /**
   * TLS to the server: null, never; otherwise when the server offers it, or always (required);
   * `followsClient`: only for a client that started TLS itself.
   */
  backendTls: { required: boolean; followsClient: boolean } | null;
  /** A client that logs in without TLS is refused (--require-secure-transport). */
  requireSecureTransport: boolean;
  /** The client came on the Unix socket, a secure transport as the server counts one. */
  unixSocket: boolean;
  /** The server, as errors name it. */
  backendName: string;
}

/** A login the proxy ends itself: the error, the number its packet takes, and the server's fate. */
export interface LoginRefusal {
  error: ProxyError;
  sequenceId: number;
  /**
   * The server connection goes first, unwritten: the server must not read what comes next as a
   * login.
   */
  closeBackend: boolean;
}

/** What the client's packet in the handshake phase leads to. */
export type HandshakeStep =
  /** The SSLRequest: TLS starts on the client connection; the response comes inside it. */
  | { action: 'start-tls' }
  /** The handshake response, rewritten in place: to the server (inside TLS when `serverTls`). */
  | { action: 'login'; serverTls: boolean }
  | { action: 'refuse'; refusal: LoginRefusal };

export class LoginNegotiation {
  readonly #policy: LoginPolicy;
  /** The server's greeting as the client was sent it; null before it came. */
  greeting: Greeting | null = null;
  /** The capabilities the login settled on (the client's, as the server is asked for them). */
  capabilities = 0;
  mariaDbCapabilities = 0;
  /**
   * Added to the numbers of the login's packets on their way to the client, taken from the
   * client's: the client's SSLRequest took a number the server never saw, and the proxy's own
   * SSLRequest to the server takes one the client never saw. 0 once the login has ended.
   */
  shift = 0;
  /** The server offered TLS and the policy asks for it: the login goes to it inside TLS. */
  serverTls = false;
  /** The server's greeting offered TLS. */
  #serverOffersTls = false;
  /** The client asked for compression: the proxy compresses for it once the login succeeds. */
  compressionAsked = false;
  /** The number of the login's reply to the client, for an error of the proxy's own. */
  replySequence = 0;
  /** TLS has started on the client connection. */
  clientTls = false;

  constructor(policy: LoginPolicy) {
    this.#policy = policy;
  }

  /**
   * The server's greeting (not an ERR packet): null when it goes to the client, rewritten in
   * place (the TLS and compression the proxy offers), or why the login ends before it began.
   */
  greet(payload: Buffer): LoginRefusal | null {
    const serverOffers = parseGreeting(payload)?.capabilities ?? 0;
    const backendTls = this.#policy.backendTls;
    if (backendTls !== null) {
      const offered = (serverOffers & Capability.SSL) !== 0;
      if (!offered && backendTls.required) {
        return {
          error: new ProxyError(
            ProxyErrorCode.BACKEND_UNREACHABLE,
            `The server at ${this.#policy.backendName} offers no TLS, which --backend-tls required asks for`,
          ),
          sequenceId: 0,
          closeBackend: true,
        };
      }
      this.#serverOffersTls = offered;
      // Whether the client starts TLS is known at its first packet (see respond).
      this.serverTls = offered && !backendTls.followsClient;
    }
    const greeting = restrictGreeting(payload);
    if (greeting === null) {
      return {
        error: new ProxyError(
          ProxyErrorCode.BACKEND_UNREACHABLE,
          `The server at ${this.#policy.backendName} sent a greeting nicecache cannot read`,
        ),
        sequenceId: 0,
        closeBackend: false,
      };
    }
    if (this.#policy.clientTls) offerCapability(payload, greeting, Capability.SSL);
    // Offered as the server offers it (a server built without zlib does not), spoken by the proxy.
    if ((serverOffers & Capability.COMPRESS) !== 0) {
      offerCapability(payload, greeting, Capability.COMPRESS);
    }
    this.greeting = greeting;
    return null;
  }

  /**
   * The client's packet after the greeting: its SSLRequest or its handshake response. A response
   * to send on has its capabilities and (in `raw`) its number rewritten for the server; `client`
   * names the client as the server would in an access error.
   */
  respond(payload: Buffer, raw: Buffer, sequenceId: number, client: string): HandshakeStep {
    const reply = sequenceId + 1;
    if (isSslRequest(payload)) {
      // Compression, asked for here too, is taken up with the login that follows inside TLS.
      if (!this.#policy.clientTls || this.clientTls) {
        return refuse(
          new ProxyError(
            ProxyErrorCode.TLS_NOT_OFFERED,
            this.#policy.clientTls
              ? 'TLS was requested twice'
              : 'TLS was requested, but this nicecache offers none (it runs with --tls off)',
          ),
          reply,
          false,
        );
      }
      this.clientTls = true;
      this.shift = 1;
      return { action: 'start-tls' };
    }
    const response = restrictHandshakeResponse(payload, this.greeting!);
    if (response === null) {
      return refuse(new ProxyError(ProxyErrorCode.BAD_HANDSHAKE, 'Bad handshake'), reply, false);
    }
    if (this.#policy.requireSecureTransport && !this.clientTls && !this.#policy.unixSocket) {
      // MariaDB refuses a login over an insecure transport under require_secure_transport as a
      // failed login. The server has not seen the login: it gets nothing it would read as one.
      return refuse(
        new ProxyError(
          ProxyErrorCode.ACCESS_DENIED,
          `Access denied for user '${response.user}'@'${client}' (using password: ${response.authLength > 0 ? 'YES' : 'NO'})`,
        ),
        reply,
        true,
      );
    }
    if (this.#policy.backendTls?.followsClient === true) {
      this.serverTls = this.#serverOffersTls && this.clientTls;
    }
    if (this.serverTls) {
      // The login goes to the server inside TLS, after the proxy's SSLRequest, which takes the
      // server's sequence number 1: the login's packets are one further there.
      response.capabilities = (response.capabilities | Capability.SSL) >>> 0;
      this.shift -= 1;
    } else {
      // The backend connection is not TLS: the server must not wait for a TLS handshake.
      response.capabilities = (response.capabilities & ~Capability.SSL) >>> 0;
    }
    if ((response.capabilities & Capability.COMPRESS) !== 0) {
      // The proxy compresses for the client itself: the server is not asked to.
      this.compressionAsked = true;
      response.capabilities = (response.capabilities & ~Capability.COMPRESS) >>> 0;
    }
    payload.writeUInt32LE(response.capabilities, 0);
    this.replySequence = reply;
    // Sent as the server's first reply: its number, not the one after the SSLRequest.
    if (this.shift !== 0) raw[3] = (raw[3]! - this.shift) & 0xff;
    this.capabilities = response.capabilities;
    this.mariaDbCapabilities = response.mariaDbCapabilities;
    return { action: 'login', serverTls: this.serverTls };
  }
}

function refuse(error: ProxyError, sequenceId: number, closeBackend: boolean): HandshakeStep {
  return { action: 'refuse', refusal: { error, sequenceId, closeBackend } };
}
