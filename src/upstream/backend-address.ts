/** Where the server is, and how the proxy's connections to it are secured. */
import type { ServerTls } from './mysql-connection.ts';

export interface BackendAddress {
  host: string;
  port: number;
  /** TLS to the server (--backend-tls); null or absent: every connection to it stays plain. */
  tls?: ServerTls | null;
}
