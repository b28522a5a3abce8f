/**
 * Captures real replies of the server for the framing unit tests, which then run without one:
 *   node test/support/capture-fixtures.ts > test/fixtures/captured-replies.json
 */
import { Command } from '../../src/protocol/constants.ts';
import { execute, fetch, prepare } from '../../src/protocol/statement-commands.ts';
import { BACKEND_HOST, BACKEND_PASSWORD, BACKEND_PORT, BACKEND_USER } from './env.ts';
import { RawClient, replyBytes } from './raw-client.ts';

interface Capture {
  name: string;
  command: number;
  deprecateEof: boolean;
  /** The whole reply as it came off the wire, base64. */
  reply: string;
}

const captures: Capture[] = [];
for (const deprecateEof of [false, true]) {
  const client = await RawClient.connect({
    host: BACKEND_HOST,
    port: BACKEND_PORT,
    user: BACKEND_USER,
    password: BACKEND_PASSWORD,
    database: null,
    deprecateEof,
  });
  const keep = async (name: string, payload: Buffer): Promise<Buffer[]> => {
    const packets = await client.command(payload);
    captures.push({
      name,
      command: payload[0]!,
      deprecateEof,
      reply: replyBytes(packets).toString('base64'),
    });
    return packets.map((packet) => packet.payload);
  };
  const query = (sql: string): Buffer =>
    Buffer.concat([Buffer.from([Command.QUERY]), Buffer.from(sql)]);
  await keep(
    'multi-statement: rows, OK, empty set, NULLs',
    query(
      "SELECT 1 AS a, NULL AS b, 'x' AS c UNION ALL SELECT 2, 'y', NULL; DO 1; SELECT 1 FROM DUAL WHERE 0; SELECT REPEAT('z', 300)",
    ),
  );
  await keep('error after a result', query('SELECT 1; SELECT * FROM no_such_db.no_such_table'));
  await keep('ok with info', query('SET @a = 1'));
  const [prepared] = await keep(
    'prepare',
    prepare('SELECT ? + 1 AS n, seq FROM seq_1_to_5 WHERE seq > ?'),
  );
  const id = prepared!.readUInt32LE(1);
  await keep('execute', execute(id, [41, 1]));
  await keep('execute with cursor', execute(id, [1, 0], true));
  await keep('fetch', fetch(id, 3));
  await keep('fetch to the end', fetch(id, 10));
  client.close();
}
process.stdout.write(`${JSON.stringify(captures, null, 2)}\n`);
