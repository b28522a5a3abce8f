/**
 * A command sent to the server whose reply is still to come: what reads its reply (its tracker),
 * whose reply it is (the client's, or the proxy's own), and what is kept of it on the way (a copy
 * for the cache, packets to read or to rewrite, the digest it is timed for). A session keeps one
 * per command in flight, in the order they were sent (client-session.ts); each is made by one of
 * the constructors below, so every kind has the same fields.
 */
import type { DigestRecord } from '../cache/statement-digests.ts';
import type { ReplyTracker } from '../protocol/reply-tracker.ts';
import type { ReplyCopy } from './reply-copy.ts';
import type { CommandPlan } from './statement-router.ts';
import type { StatusRewrite } from './status-variables.ts';

/**
 * The proxy's own commands: the session probe, a replay (diagnostics, FOUND_ROWS()), a
 * transaction command of the proxy's; 'discard', a client command sent right after the proxy's
 * start of a transaction that failed or does not match the hits served before it, whose client
 * gets another answer (see StatementRouter.acceptDiscarded).
 */
export type InternalKind = 'probe' | 'replay' | 'transaction' | 'discard';

export class InFlightCommand {
  readonly tracker: ReplyTracker;
  /** What the cache needs to hear when the reply has ended. */
  readonly plan: CommandPlan | null;
  /** The proxy's own command: its reply is not the client's (null: it is). */
  internal: InternalKind | null;
  /** A status reply that goes to the client only once complete, rewritten: SHOW STATUS. */
  readonly status: StatusRewrite | null;
  /** `status` is set. */
  readonly rewrite: boolean;
  /** Packets kept for the proxy to read (probe: payloads; rewrite: whole packets). */
  readonly packets: Buffer[] | null;
  /** The copy of a reply the cache will store, or of a BEGIN or COMMIT reply kept to answer with. */
  copy: ReplyCopy | null;
  /**
   * Without the cache, the digest the command counts in (see RelayDigests): timed from
   * `sentAt` until its reply ends, or, for a COM_STMT_PREPARE (`prepares`), the digest of the
   * statement's executions.
   */
  readonly digest: DigestRecord | null;
  readonly sentAt: number;
  readonly prepares: boolean;

  private constructor(
    tracker: ReplyTracker,
    plan: CommandPlan | null,
    internal: InternalKind | null,
    status: StatusRewrite | null,
    packets: Buffer[] | null,
    copy: ReplyCopy | null,
    digest: DigestRecord | null,
    prepares: boolean,
  ) {
    this.tracker = tracker;
    this.plan = plan;
    this.internal = internal;
    this.status = status;
    this.rewrite = status !== null;
    this.packets = packets;
    this.copy = copy;
    this.digest = digest;
    this.sentAt = digest === null || prepares ? 0 : performance.now();
    this.prepares = prepares;
  }

  /**
   * A client's command (or its login): `plan`, what the cache hears at its end; `status`, a
   * status reply to rewrite (its packets are kept), the plan's with the cache; `digest`, without
   * the cache, what it is counted in.
   */
  static client(
    tracker: ReplyTracker,
    plan: CommandPlan | null,
    copy: ReplyCopy | null,
    status: StatusRewrite | null = plan?.status ?? null,
    digest: DigestRecord | null = null,
    prepares = false,
  ): InFlightCommand {
    const packets = status !== null ? [] : null;
    return new InFlightCommand(tracker, plan, null, status, packets, copy, digest, prepares);
  }

  /** A command of the proxy's own: its reply is read (its packets kept), a replay's dropped. */
  static own(kind: InternalKind, tracker: ReplyTracker): InFlightCommand {
    return new InFlightCommand(
      tracker,
      null,
      kind,
      null,
      kind === 'replay' ? null : [],
      null,
      null,
      false,
    );
  }
}
