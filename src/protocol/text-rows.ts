/**
 * Decodes the rows of a text-protocol result set into strings. Only for small replies the proxy
 * or its tools read themselves (status counters); relayed replies are never decoded.
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response_text_resultset.html
 */
import { MAX_PACKET_PAYLOAD, PacketHeader } from './constants.ts';
import { readLenencBytes, readLenencInt } from './lenenc.ts';

/** `packets` are the payloads of one reply; rows of its first result set are returned. */
export function readTextRows(
  packets: Buffer[],
  deprecateEof: boolean,
): Array<Array<string | null>> {
  // The OKs of statements before it, when several were sent in one query.
  let first = 0;
  while (packets[first]?.[0] === PacketHeader.OK) first++;
  const header = packets[first];
  if (header === undefined) return [];
  const columns = readLenencInt(header, 0);
  if (columns === null) throw new Error('malformed result set header');
  let index = first + 1 + columns.value + (deprecateEof ? 0 : 1);
  const rows: Array<Array<string | null>> = [];
  for (; index < packets.length; index++) {
    const row = packets[index]!;
    if (row[0] === PacketHeader.ERR) break;
    if (row[0] === PacketHeader.EOF && row.length < MAX_PACKET_PAYLOAD) break;
    const values: Array<string | null> = [];
    let pos = 0;
    for (let column = 0; column < columns.value; column++) {
      if (row[pos] === 0xfb) {
        values.push(null);
        pos++;
        continue;
      }
      const value = readLenencBytes(row, pos);
      if (value === null) throw new Error('malformed row');
      values.push(value.value.toString('utf8'));
      pos = value.end;
    }
    rows.push(values);
  }
  return rows;
}
