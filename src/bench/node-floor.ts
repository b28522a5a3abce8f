/**
 * The Node floor: the least a Node server can spend per request/response on this machine, so a
 * proxy's CPU per query can be given as a ratio to it, measured in the same run.
 *
 * A server that speaks just enough of the protocol for sysbench's point select: a greeting, an OK
 * for any login, and for every command one `socket.write` of a reply built once at start (the
 * same result shape a real point select returns: one CHAR(120) column, one row) — in text and
 * binary protocol. Its per-request work is a `'data'` listener that reads each command's first
 * byte: what every Node server pays at the least, and what a cache hit cannot go below.
 *
 * It trusts its client: commands are assumed not to be split across reads (sysbench sends one
 * small command at a time and waits), and no authentication is checked.
 */
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { Capability, Command, ServerStatus } from '../protocol/constants.ts';
import { encodeEof, encodeOk } from '../protocol/generic-packets.ts';
import { writeLenencInt, lenencIntSize } from '../protocol/lenenc.ts';
import { encodePacket } from '../protocol/packet.ts';

const CAPABILITIES =
  Capability.CLIENT_MYSQL |
  Capability.FOUND_ROWS |
  Capability.LONG_FLAG |
  Capability.CONNECT_WITH_DB |
  Capability.PROTOCOL_41 |
  Capability.TRANSACTIONS |
  Capability.SECURE_CONNECTION |
  Capability.MULTI_RESULTS |
  Capability.PS_MULTI_RESULTS |
  Capability.PLUGIN_AUTH;

const UTF8MB4_GENERAL_CI = 45;
const TYPE_LONGLONG = 0x08;
const TYPE_STRING = 0xfe;
const NOT_NULL_FLAG = 0x0001;
const STATUS = { status: ServerStatus.AUTOCOMMIT, warnings: 0 };

function lenencString(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(lenencIntSize(bytes.length) + bytes.length);
  bytes.copy(out, writeLenencInt(out, 0, bytes.length));
  return out;
}

function columnDefinition(name: string, type: number, length: number): Buffer {
  const fixed = Buffer.alloc(13);
  fixed[0] = 0x0c;
  fixed.writeUInt16LE(UTF8MB4_GENERAL_CI, 1);
  fixed.writeUInt32LE(length, 3);
  fixed[7] = type;
  fixed.writeUInt16LE(NOT_NULL_FLAG, 8);
  return Buffer.concat([
    ...['def', 'sbtest', 'sbtest1', 'sbtest1', name, name].map(lenencString),
    fixed,
  ]);
}

function greeting(): Buffer {
  const version = Buffer.from('5.5.5-10.11.0-node-floor\0', 'latin1');
  const fixed = Buffer.alloc(4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10 + 13);
  let pos = 0;
  const header = Buffer.from([10]);
  pos = fixed.writeUInt32LE(1, pos);
  pos += fixed.write('floor-12', pos, 'latin1');
  fixed[pos++] = 0;
  pos = fixed.writeUInt16LE(CAPABILITIES & 0xffff, pos);
  fixed[pos++] = UTF8MB4_GENERAL_CI;
  pos = fixed.writeUInt16LE(ServerStatus.AUTOCOMMIT, pos);
  pos = fixed.writeUInt16LE(CAPABILITIES >>> 16, pos);
  fixed[pos++] = 21;
  pos += 10;
  // The scramble's second part, then the NUL the buffer already holds.
  fixed.write('floor-scramb', pos, 'latin1');
  const plugin = Buffer.from('mysql_native_password\0', 'latin1');
  return encodePacket(Buffer.concat([header, version, fixed, plugin]), 0);
}

/** The replies, each one logical reply as the server would send it (classic EOF packets). */
function replies(): { query: Buffer; prepare: Buffer; execute: Buffer; ok: Buffer } {
  const value = '0'.repeat(120);
  const column = columnDefinition('c', TYPE_STRING, 480);
  const textRow = lenencString(value);
  const binaryRow = Buffer.concat([Buffer.from([0x00, 0x00]), lenencString(value)]);
  const resultSet = (row: Buffer): Buffer =>
    Buffer.concat([
      encodePacket(Buffer.from([1]), 1),
      encodePacket(column, 2),
      encodeEof(STATUS, 3),
      encodePacket(row, 4),
      encodeEof(STATUS, 5),
    ]);
  const prepareOk = Buffer.alloc(12);
  prepareOk.writeUInt32LE(1, 1);
  prepareOk.writeUInt16LE(1, 5);
  prepareOk.writeUInt16LE(1, 7);
  return {
    query: resultSet(textRow),
    prepare: Buffer.concat([
      encodePacket(prepareOk, 1),
      encodePacket(columnDefinition('?', TYPE_LONGLONG, 21), 2),
      encodeEof(STATUS, 3),
      encodePacket(column, 4),
      encodeEof(STATUS, 5),
    ]),
    execute: resultSet(binaryRow),
    ok: encodeOk(STATUS, 1),
  };
}

/** Starts the floor server; port 0 picks a free port. */
export function startNodeFloor(host: string, port: number): Promise<Server> {
  const hello = greeting();
  const loginOk = encodeOk(STATUS, 2);
  const { query, prepare, execute, ok } = replies();

  const onConnection = (socket: Socket): void => {
    socket.setNoDelay(true);
    let loggedIn = false;
    socket.on('data', (chunk: Buffer) => {
      if (!loggedIn) {
        loggedIn = true;
        socket.write(loginOk);
        return;
      }
      // One reply per command in the chunk; each command is whole (see the file's comment).
      for (let at = 0; at + 4 < chunk.length; at += 4 + chunk.readUIntLE(at, 3)) {
        switch (chunk[at + 4]) {
          case Command.QUERY:
            socket.write(query);
            break;
          case Command.STMT_EXECUTE:
            socket.write(execute);
            break;
          case Command.STMT_PREPARE:
            socket.write(prepare);
            break;
          case Command.STMT_CLOSE:
            break;
          case Command.QUIT:
            socket.end();
            return;
          default:
            socket.write(ok);
        }
      }
    });
    socket.on('error', () => socket.destroy());
    socket.write(hello);
  };

  return new Promise((resolve, reject) => {
    const server = createServer({ noDelay: true }, onConnection);
    server.once('error', reject);
    server.listen({ host, port }, () => resolve(server));
  });
}
