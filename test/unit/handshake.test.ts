/**
 * The client's HandshakeResponse41 as the proxy reads it, cut or corrupted anywhere: a bad
 * handshake (null, which the client gets as error 1043), never an exception.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Capability } from '../../src/protocol/constants.ts';
import {
  encodeHandshakeResponse,
  restrictHandshakeResponse,
} from '../../src/protocol/handshake.ts';
import type { Greeting } from '../../src/protocol/handshake.ts';

const offered: Greeting = {
  serverVersion: '11.4.0-MariaDB',
  connectionId: 1,
  capabilities: 0xffffffff & ~Capability.CLIENT_MYSQL,
  mariaDbCapabilities: 0,
  characterSet: 45,
  status: 2,
  authPluginName: 'mysql_native_password',
};

const capabilities =
  Capability.PROTOCOL_41 |
  Capability.SECURE_CONNECTION |
  Capability.PLUGIN_AUTH |
  Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA |
  Capability.CONNECT_WITH_DB;

function response(authResponse: Buffer): Buffer {
  return encodeHandshakeResponse({
    capabilities,
    characterSet: 45,
    user: 'app',
    authResponse,
    database: 'test',
    authPlugin: 'mysql_native_password',
  });
}

test('a whole response is read: user and schema', () => {
  const read = restrictHandshakeResponse(response(Buffer.alloc(20, 7)), offered);
  assert.equal(read?.user, 'app');
  assert.equal(read?.database, 'test');
  assert.equal(read?.authLength, 20);
  // A login without a password sends an empty auth response ("using password: NO").
  assert.equal(restrictHandshakeResponse(response(Buffer.alloc(0)), offered)?.authLength, 0);
});

test('a response cut at any offset, or with any byte replaced, is a bad handshake or read', () => {
  const whole = response(Buffer.alloc(20, 7));
  for (let length = 0; length <= whole.length; length++) {
    const cut = Buffer.from(whole.subarray(0, length));
    assert.doesNotThrow(() => restrictHandshakeResponse(cut, offered), `cut at ${length}`);
  }
  for (let at = 0; at < whole.length; at++) {
    for (const value of [0x00, 0xfb, 0xfc, 0xfd, 0xfe, 0xff]) {
      const changed = Buffer.from(whole);
      changed[at] = value;
      for (const length of [changed.length, at + 1, at + 2, at + 3]) {
        const input = Buffer.from(changed.subarray(0, length));
        assert.doesNotThrow(
          () => restrictHandshakeResponse(input, offered),
          `byte ${at} = 0x${value.toString(16)}, ${length} bytes`,
        );
      }
    }
  }
});

test('an auth-response length that runs past the end is a bad handshake', () => {
  const whole = response(Buffer.alloc(20, 7));
  // The length byte of the auth response follows "app\0" after the 32 fixed bytes.
  const lengthAt = 32 + 4;
  const lying = Buffer.from(whole.subarray(0, lengthAt + 2));
  lying[lengthAt] = 0xfc;
  assert.equal(restrictHandshakeResponse(lying, offered), null);
});
