/**
 * A MariaDB GTID position: for each replication domain, the last transaction applied
 * ("domain-server-sequence"), as @@gtid_binlog_pos writes it and @slave_connect_state reads it.
 */
export class GtidPosition {
  readonly #byDomain = new Map<number, string>();

  /** Reads "0-1-42,1-2-7" (empty: no transaction yet); null when the text is not a position. */
  static parse(text: string): GtidPosition | null {
    const position = new GtidPosition();
    const trimmed = text.trim();
    if (trimmed === '') return position;
    for (const part of trimmed.split(',')) {
      const match = /^(\d+)-(\d+)-(\d+)$/.exec(part.trim());
      if (match === null) return null;
      position.#byDomain.set(Number(match[1]), `${match[1]}-${match[2]}-${match[3]}`);
    }
    return position;
  }

  /** The transaction `domain-serverId-sequence` has been applied. */
  advance(domain: number, serverId: number, sequence: bigint): void {
    this.#byDomain.set(domain, `${domain}-${serverId}-${sequence}`);
  }

  toString(): string {
    return [...this.#byDomain.keys()]
      .sort((a, b) => a - b)
      .map((domain) => this.#byDomain.get(domain)!)
      .join(',');
  }
}
