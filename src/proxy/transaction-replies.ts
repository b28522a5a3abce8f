/**
 * The server's own replies to this session's BEGIN and COMMIT/ROLLBACK texts, kept so the proxy
 * can answer them itself (see deferred-transaction.ts) with exactly the bytes the server sends.
 * Only the plain OK is kept: no warnings, no session state change (session tracking makes the
 * server add what changed, which a replay could not know), nothing said about this one run.
 * Whatever may change a reply (a SET, a new schema) makes the session probe run again, which
 * forgets them all.
 */
import { Command, PacketHeader, ServerStatus } from '../protocol/constants.ts';

export interface TransactionReply {
  /** The reply packet, header included (sequence id 1). */
  readonly bytes: Buffer;
  /** Its status flags: the session's after the statement. */
  readonly status: number;
  /** The statement as the client sends it (a COM_QUERY or COM_STMT_EXECUTE payload). */
  readonly request: Buffer;
  /**
   * What the proxy sends the server in its place, later (a COM_QUERY payload): the request
   * itself for a text; a prepared statement's text for its execution, which the client may
   * close before the proxy sends it.
   */
  readonly sent: Buffer;
}

/** Status bits about one run of a statement, or about state a replay cannot repeat. */
const UNREPEATABLE =
  ServerStatus.SESSION_STATE_CHANGED |
  ServerStatus.QUERY_WAS_SLOW |
  ServerStatus.MORE_RESULTS_EXISTS |
  ServerStatus.METADATA_CHANGED;

/** A session sends one or two such texts; more than this means something unusual: start over. */
const MAX_REPLIES = 8;

/** OK header, affected rows 0, insert id 0, status, warnings. */
const PLAIN_OK_LENGTH = 7;

export class TransactionReplies {
  /** Few, short and compared by their bytes: no string is built to find one. */
  readonly #replies: TransactionReply[] = [];

  /** The reply kept for the statement in `payload` (as the client sends it). */
  get(payload: Buffer): TransactionReply | undefined {
    for (const reply of this.#replies) {
      if (reply.request.length === payload.length && reply.request.equals(payload)) return reply;
    }
    return undefined;
  }

  /**
   * The reply the server gave the statement sent as `request` (to send as `sent` later); kept
   * when it is one plain OK whose status `accepts`.
   */
  learn(
    request: Buffer,
    sent: Buffer,
    reply: Buffer | null,
    accepts: (status: number) => boolean,
  ): void {
    if (reply === null || reply.length !== 4 + PLAIN_OK_LENGTH) return;
    if (reply.readUIntLE(0, 3) !== PLAIN_OK_LENGTH || reply[3] !== 1) return;
    if (reply[4] !== PacketHeader.OK || reply[5] !== 0 || reply[6] !== 0) return;
    const status = reply.readUInt16LE(7);
    if (reply.readUInt16LE(9) !== 0 || (status & UNREPEATABLE) !== 0 || !accepts(status)) return;
    if (this.get(request) !== undefined) return;
    if (this.#replies.length >= MAX_REPLIES) this.#replies.length = 0;
    this.#replies.push({ bytes: reply, status, request, sent });
  }

  /** Forgets the replies to executions of prepared statement `id` (it was closed). */
  forgetExecutions(id: number): void {
    const replies = this.#replies;
    for (let i = replies.length - 1; i >= 0; i--) {
      const request = replies[i]!.request;
      if (request[0] === Command.STMT_EXECUTE && request.readUInt32LE(1) === id) {
        replies.splice(i, 1);
      }
    }
  }

  forget(): void {
    this.#replies.length = 0;
  }
}
