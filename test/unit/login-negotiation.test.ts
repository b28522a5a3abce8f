/**
 * The login's decisions, apart from the sockets: what the greeting offers the client, what its
 * handshake response becomes for the server, TLS on either side and the renumbering it takes,
 * and the proxy's own refusals. The same decisions run against real servers and clients in the
 * TLS, compression and lifecycle tests; here each is taken alone, on greetings built to order.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Capability } from '../../src/protocol/constants.ts';
import { ProxyErrorCode } from '../../src/protocol/errors.ts';
import { encodeHandshakeResponse, parseGreeting } from '../../src/protocol/handshake.ts';
import { encodePacket } from '../../src/protocol/packet.ts';
import { LoginNegotiation } from '../../src/proxy/login-negotiation.ts';
import type { LoginPolicy } from '../../src/proxy/login-negotiation.ts';

const BASE =
  Capability.PROTOCOL_41 |
  Capability.SECURE_CONNECTION |
  Capability.PLUGIN_AUTH |
  Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA |
  Capability.CONNECT_WITH_DB |
  Capability.TRANSACTIONS |
  Capability.DEPRECATE_EOF;

/** A MariaDB HandshakeV10 greeting offering `capabilities`. */
function greeting(capabilities: number): Buffer {
  const version = Buffer.from('10.11.19-MariaDB\0', 'latin1');
  const fixed = Buffer.alloc(4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 6 + 4);
  let at = 0;
  at = fixed.writeUInt32LE(42, at); // connection id
  at += 8; // scramble, first part
  at += 1; // filler
  at = fixed.writeUInt16LE(capabilities & 0xffff, at);
  fixed[at++] = 45; // utf8mb4_general_ci
  at = fixed.writeUInt16LE(2, at); // autocommit
  at = fixed.writeUInt16LE(capabilities >>> 16, at);
  fixed[at++] = 21; // scramble length
  at += 6; // reserved
  fixed.writeUInt32LE(0, at); // MariaDB's own capabilities
  return Buffer.concat([
    Buffer.from([10]),
    version,
    fixed,
    Buffer.alloc(13),
    Buffer.from('mysql_native_password\0', 'latin1'),
  ]);
}

function response(capabilities: number): Buffer {
  return encodeHandshakeResponse({
    capabilities,
    characterSet: 45,
    user: 'app',
    authResponse: Buffer.alloc(20, 7),
    database: 'test',
    authPlugin: 'mysql_native_password',
  });
}

const SSL_REQUEST_CAPABILITIES = BASE | Capability.SSL;
function sslRequest(): Buffer {
  return response(SSL_REQUEST_CAPABILITIES).subarray(0, 32);
}

function negotiation(policy: Partial<LoginPolicy> = {}): LoginNegotiation {
  return new LoginNegotiation({
    clientTls: false,
    backendTls: null,
    requireSecureTransport: false,
    unixSocket: false,
    backendName: 'db:3306',
    ...policy,
  });
}

/** The client's handshake response, numbered `sequenceId`, through the negotiation. */
function respond(login: LoginNegotiation, payload: Buffer, sequenceId: number) {
  const raw = encodePacket(payload, sequenceId);
  const step = login.respond(raw.subarray(4), raw, sequenceId, '10.0.0.9');
  return {
    step,
    sentCapabilities: raw.length >= 8 ? raw.readUInt32LE(4) : -1,
    sentSequence: raw[3],
  };
}

describe('login negotiation', () => {
  test('the greeting offers TLS only with a certificate, compression only as the server does', () => {
    for (const [clientTls, serverCompress] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      const payload = greeting(BASE | (serverCompress ? Capability.COMPRESS : 0));
      assert.equal(negotiation({ clientTls }).greet(payload), null);
      const offered = parseGreeting(payload)!.capabilities;
      assert.equal((offered & Capability.SSL) !== 0, clientTls, `TLS offered: ${clientTls}`);
      assert.equal((offered & Capability.COMPRESS) !== 0, serverCompress);
    }
  });

  test('a required TLS to a server that offers none ends the login before the server reads one', () => {
    const refusal = negotiation({ backendTls: { required: true, followsClient: false } }).greet(
      greeting(BASE),
    );
    assert.equal(refusal?.error.code, ProxyErrorCode.BACKEND_UNREACHABLE);
    assert.match(refusal.error.message, /db:3306 offers no TLS/);
    assert.equal(refusal.closeBackend, true);
    // Preferred: the login goes on in the clear.
    const preferred = negotiation({ backendTls: { required: false, followsClient: false } });
    assert.equal(preferred.greet(greeting(BASE)), null);
    assert.equal(preferred.serverTls, false);
    // An unreadable greeting is the server's fault, told as such.
    const cut = negotiation().greet(Buffer.from([10, 0x31, 0x30]));
    assert.equal(cut?.error.code, ProxyErrorCode.BACKEND_UNREACHABLE);
  });

  test('a plain login: SSL and compression are not asked of the server, numbers unchanged', () => {
    const login = negotiation();
    login.greet(greeting(BASE | Capability.COMPRESS));
    const { step, sentCapabilities, sentSequence } = respond(
      login,
      response(BASE | Capability.COMPRESS),
      1,
    );
    assert.deepEqual(step, { action: 'login', serverTls: false });
    assert.equal(sentCapabilities & (Capability.SSL | Capability.COMPRESS), 0);
    assert.equal(sentSequence, 1);
    assert.equal(login.compressionAsked, true);
    assert.equal(login.replySequence, 2);
    assert.equal(login.capabilities & Capability.DEPRECATE_EOF, Capability.DEPRECATE_EOF);
  });

  test('TLS from the client: the response inside it is numbered one past what the server expects', () => {
    const login = negotiation({ clientTls: true });
    login.greet(greeting(BASE));
    assert.deepEqual(respond(login, sslRequest(), 1).step, { action: 'start-tls' });
    assert.equal(login.shift, 1);
    const { step, sentSequence, sentCapabilities } = respond(
      login,
      response(SSL_REQUEST_CAPABILITIES),
      2,
    );
    assert.deepEqual(step, { action: 'login', serverTls: false });
    // The server never saw the SSLRequest: the response is its first packet after the greeting.
    assert.equal(sentSequence, 1);
    assert.equal(sentCapabilities & Capability.SSL, 0);
    assert.equal(login.replySequence, 3);
    // A second SSLRequest is refused.
    const again = negotiation({ clientTls: true });
    again.greet(greeting(BASE));
    respond(again, sslRequest(), 1);
    const twice = respond(again, sslRequest(), 2).step;
    assert.equal(twice.action, 'refuse');
    assert.match(twice.action === 'refuse' ? twice.refusal.error.message : '', /twice/);
  });

  test('TLS to the server: the proxy’s own SSLRequest takes a number, both sides TLS cancel out', () => {
    const serverOnly = negotiation({ backendTls: { required: false, followsClient: false } });
    serverOnly.greet(greeting(BASE | Capability.SSL));
    const plainClient = respond(serverOnly, response(BASE), 1);
    assert.deepEqual(plainClient.step, { action: 'login', serverTls: true });
    assert.equal(plainClient.sentSequence, 2);
    assert.equal(plainClient.sentCapabilities & Capability.SSL, Capability.SSL);
    assert.equal(serverOnly.shift, -1);

    const both = negotiation({
      clientTls: true,
      backendTls: { required: true, followsClient: false },
    });
    both.greet(greeting(BASE | Capability.SSL));
    respond(both, sslRequest(), 1);
    const inside = respond(both, response(SSL_REQUEST_CAPABILITIES), 2);
    assert.deepEqual(inside.step, { action: 'login', serverTls: true });
    assert.equal(inside.sentSequence, 2);
    assert.equal(both.shift, 0);
  });

  test('TLS to the server that follows the client’s: a client on TLS gets it, one in the clear not', () => {
    const follow = { required: false, followsClient: true };
    const tlsClient = negotiation({ clientTls: true, backendTls: follow });
    tlsClient.greet(greeting(BASE | Capability.SSL));
    respond(tlsClient, sslRequest(), 1);
    const inside = respond(tlsClient, response(SSL_REQUEST_CAPABILITIES), 2);
    assert.deepEqual(inside.step, { action: 'login', serverTls: true });
    assert.equal(inside.sentSequence, 2);
    assert.equal(inside.sentCapabilities & Capability.SSL, Capability.SSL);

    const plainClient = negotiation({ clientTls: true, backendTls: follow });
    plainClient.greet(greeting(BASE | Capability.SSL));
    const plain = respond(plainClient, response(BASE), 1);
    assert.deepEqual(plain.step, { action: 'login', serverTls: false });
    assert.equal(plain.sentSequence, 1);
    assert.equal(plain.sentCapabilities & Capability.SSL, 0);

    // A server that offers no TLS: a client on TLS goes on in the clear to it, as preferred.
    const noOffer = negotiation({ clientTls: true, backendTls: follow });
    assert.equal(noOffer.greet(greeting(BASE)), null);
    respond(noOffer, sslRequest(), 1);
    assert.deepEqual(respond(noOffer, response(SSL_REQUEST_CAPABILITIES), 2).step, {
      action: 'login',
      serverTls: false,
    });
  });

  test('refusals of the proxy’s own: no TLS offered, a bad handshake, an insecure transport', () => {
    const noTls = negotiation();
    noTls.greet(greeting(BASE));
    const asked = respond(noTls, sslRequest(), 1).step;
    assert.equal(
      asked.action === 'refuse' && asked.refusal.error.code,
      ProxyErrorCode.TLS_NOT_OFFERED,
    );
    assert.equal(asked.action === 'refuse' && asked.refusal.sequenceId, 2);

    const bad = negotiation();
    bad.greet(greeting(BASE));
    const garbage = respond(bad, Buffer.from([1, 2, 3]), 1).step;
    assert.equal(
      garbage.action === 'refuse' && garbage.refusal.error.code,
      ProxyErrorCode.BAD_HANDSHAKE,
    );

    const secure = negotiation({ clientTls: true, requireSecureTransport: true });
    secure.greet(greeting(BASE));
    const plain = respond(secure, response(BASE), 1).step;
    assert.equal(plain.action, 'refuse');
    if (plain.action === 'refuse') {
      assert.equal(plain.refusal.error.code, ProxyErrorCode.ACCESS_DENIED);
      assert.equal(
        plain.refusal.error.message,
        "Access denied for user 'app'@'10.0.0.9' (using password: YES)",
      );
      assert.equal(plain.refusal.closeBackend, true);
    }
    // The Unix socket counts as secure, as the server counts its own.
    const socket = negotiation({ requireSecureTransport: true, unixSocket: true });
    socket.greet(greeting(BASE));
    assert.equal(respond(socket, response(BASE), 1).step.action, 'login');
  });
});
