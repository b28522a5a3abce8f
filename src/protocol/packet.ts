/**
 * Building packets: a 4-byte header (3-byte length, 1-byte sequence id) before each payload,
 * payloads of 16 MB and more split into continuation packets.
 * @see https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_packets.html
 */
import { MAX_PACKET_PAYLOAD } from './constants.ts';

/** Frames `payload` as one logical packet starting at `sequenceId`. */
export function encodePacket(payload: Buffer, sequenceId: number): Buffer {
  if (payload.length < MAX_PACKET_PAYLOAD) {
    const out = Buffer.allocUnsafe(payload.length + 4);
    out.writeUIntLE(payload.length, 0, 3);
    out[3] = sequenceId & 0xff;
    payload.copy(out, 4);
    return out;
  }
  // A payload of exactly a multiple of 0xFFFFFF ends with an empty packet, so readers know it ended.
  const parts = Math.floor(payload.length / MAX_PACKET_PAYLOAD) + 1;
  const out = Buffer.allocUnsafe(payload.length + parts * 4);
  let from = 0;
  let to = 0;
  for (let part = 0; part < parts; part++) {
    const length = Math.min(MAX_PACKET_PAYLOAD, payload.length - from);
    out.writeUIntLE(length, to, 3);
    out[to + 3] = (sequenceId + part) & 0xff;
    payload.copy(out, to + 4, from, from + length);
    from += length;
    to += length + 4;
  }
  return out;
}

/** The sequence id that follows a logical packet of `payloadLength` sent with `sequenceId`. */
export function nextSequenceId(payloadLength: number, sequenceId: number): number {
  return (sequenceId + Math.floor(payloadLength / MAX_PACKET_PAYLOAD) + 1) & 0xff;
}
