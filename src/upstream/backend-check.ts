/**
 * Looks at the backend once before the proxy starts: does it greet, and what may an account do
 * on every schema. No proxy logic here: src/proxy/startup-checks.ts decides what stops a start.
 */
import { connect } from 'node:net';
import { PacketHeader } from '../protocol/constants.ts';
import { readErr } from '../protocol/generic-packets.ts';
import type { ErrInfo } from '../protocol/generic-packets.ts';
import { PacketFramer } from '../protocol/packet-framer.ts';
import type { MysqlConnection } from './mysql-connection.ts';

export type GreetingOutcome =
  | { kind: 'greeted' }
  /** The server answered with an error before any handshake (too many connections, host blocked). */
  | { kind: 'refused'; error: ErrInfo }
  /** No connection, or no greeting in time. */
  | { kind: 'unreachable'; error: NodeJS.ErrnoException };

/** Connects, reads the first packet, and hangs up without logging in. */
export function probeGreeting(
  host: string,
  port: number,
  timeoutMs: number,
): Promise<GreetingOutcome> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let settled = false;
    const done = (outcome: GreetingOutcome): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(outcome);
    };
    const framer = new PacketFramer((packet) => {
      done(
        packet.firstByte === PacketHeader.ERR && packet.payload !== null
          ? { kind: 'refused', error: readErr(packet.payload) }
          : { kind: 'greeted' },
      );
    });
    socket.setTimeout(timeoutMs, () =>
      done({ kind: 'unreachable', error: new Error(`no greeting within ${timeoutMs} ms`) }),
    );
    socket.on('data', (chunk: Buffer) => framer.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => done({ kind: 'unreachable', error }));
    socket.on('close', () =>
      done({
        kind: 'unreachable',
        error: new Error('the server closed the connection before its greeting'),
      }),
    );
  });
}

/** The account as the server names it in grants: 'user'@'host'. */
export async function currentAccount(connection: MysqlConnection): Promise<string> {
  const [row] = await connection.queryRows('SELECT CURRENT_USER()');
  const text = row?.[0] ?? '';
  const at = text.lastIndexOf('@');
  return at < 0 ? `'${text}'` : `'${text.slice(0, at)}'@'${text.slice(at + 1)}'`;
}

/**
 * The privileges the connection's account holds on *.*, from SHOW GRANTS (which, on MariaDB,
 * lists the grants of its active role too); 'ALL PRIVILEGES' stands for every one.
 */
export async function globalPrivileges(connection: MysqlConnection): Promise<Set<string>> {
  const privileges = new Set<string>();
  for (const [grant] of await connection.queryRows('SHOW GRANTS')) {
    const match = /^GRANT (.+?) ON \*\.\* TO /i.exec(grant ?? '');
    if (match === null) continue;
    for (const privilege of match[1]!.split(',')) privileges.add(privilege.trim().toUpperCase());
  }
  return privileges;
}
