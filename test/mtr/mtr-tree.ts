/**
 * The installed MariaDB test tree (Debian's `mariadb-test` package puts it next to the server's
 * shared files), found at run time, and a private copy of it: mysql-test-run writes `.reject`
 * files next to the tests, which must never land in the system's directories.
 *
 * mysql-test-run finds the server's binaries, messages and character sets relative to its own
 * directory (it walks up from the test tree until it meets a `bin` directory), so the copy is laid
 * out as a mirror of the installation prefix: every entry of the prefix and of the test tree's
 * parent is a symbolic link to the real one, except the test tree itself, whose `main` tests are
 * copied. The big, untouched parts (other suites, plugins) stay links.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

const RUNNER = 'mariadb-test-run.pl';

/** Where installations usually keep the tree, when the package manager cannot tell. */
const USUAL_PLACES = [
  '/usr/share/mysql/mysql-test',
  '/usr/share/mariadb/mysql-test',
  '/usr/local/mysql/mysql-test',
  '/usr/mysql-test',
  '/opt/mariadb/mysql-test',
];

/** The installed test tree (the directory holding mariadb-test-run.pl), or null. */
export function findInstalledTree(): string | null {
  const fromEnv = process.env['NICECACHE_MTR_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') {
    return existsSync(join(fromEnv, RUNNER)) ? realpathSync(fromEnv) : null;
  }
  try {
    const files = execFileSync('dpkg', ['-L', 'mariadb-test'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    for (const line of files.split('\n')) {
      if (line.endsWith(`/${RUNNER}`)) return realpathSync(dirname(line));
    }
  } catch {
    // No dpkg or no package: try the usual places.
  }
  for (const place of USUAL_PLACES) {
    if (existsSync(join(place, RUNNER))) return realpathSync(place);
  }
  return null;
}

/** The installation prefix mysql-test-run will derive from the tree: the first parent with bin/. */
function prefixOf(tree: string): string {
  let dir = dirname(tree);
  for (let i = 0; i < 3 && !existsSync(join(dir, 'bin')); i++) dir = dirname(dir);
  if (!existsSync(join(dir, 'bin'))) throw new Error(`no bin/ directory above ${tree}`);
  return dir;
}

export interface TreeCopy {
  /** The work directory holding everything (the mirror, the vardir, logs, rejects). */
  work: string;
  /** The copied test tree: run mariadb-test-run.pl from here. */
  tree: string;
  runner: string;
}

/** Copies the test tree into a fresh temporary work directory. */
export function copyTree(installed: string): TreeCopy {
  const work = mkdtempSync(join(tmpdir(), 'nicecache-mtr-'));
  const prefix = prefixOf(installed);
  const relative = installed.slice(prefix.length + 1).split('/');
  // Mirror every level from the prefix down to the tree's parent, linking all but the way down.
  let source = prefix;
  let target = join(work, 'root');
  mkdirSync(target);
  for (const part of relative) {
    for (const entry of readdirSync(source)) {
      if (entry !== part) symlinkSync(join(source, entry), join(target, entry));
    }
    source = join(source, part);
    target = join(target, part);
    mkdirSync(target);
  }
  for (const entry of readdirSync(source)) {
    const from = join(source, entry);
    if (entry === 'suite' || entry === 'plugin') symlinkSync(from, join(target, entry));
    else cpSync(from, join(target, entry), { recursive: true, verbatimSymlinks: true });
  }
  return { work, tree: target, runner: join(target, RUNNER) };
}

/** The names of the `main` suite's tests, sorted. */
export function mainTests(tree: string): string[] {
  return readdirSync(join(tree, 'main'))
    .filter((file) => file.endsWith('.test'))
    .map((file) => file.slice(0, -'.test'.length))
    .sort();
}

/** The server options the suite's include files ask for (have_innodb.opt, have_partition.opt). */
export function includeOptions(tree: string, names: string[]): string[] {
  const options: string[] = [];
  for (const name of names) {
    const file = join(tree, 'include', `${name}.opt`);
    if (!existsSync(file)) continue;
    for (const word of readFileSync(file, 'utf8').split(/\s+/)) if (word !== '') options.push(word);
  }
  return options;
}

/**
 * What a test (or an include file it sources) does that cannot be done to a shared, external
 * server: mtr restarts nothing in --extern mode, so a test that shuts the server down or waits
 * for it to restart would stop it for good; replication tests would point a replica somewhere
 * (START SLAVE alone only fails: the server has no primary configured).
 */
const SERVER_CONTROL = [
  /shutdown_server/i,
  /restart_mysqld|start_mysqld|kill_mysqld|shutdown_mysqld|crash_mysqld|kill_server/i,
  /\.expect\b/i,
  /^\s*shutdown\s*;/im,
  /mysqladmin[^\n]*\bshutdown\b/i,
  /change\s+master\b/i,
  /master-slave\.inc|rpl_init\.inc/i,
];

const SOURCE_LINE = /^\s*(?:--)?\s*source\s+([^\s;]+)/gim;

/**
 * Why a test cannot run against an external server (the first pattern met in it or in what it
 * sources), or null. Sourced files are followed when they name a file of the tree.
 */
export function serverControlIn(tree: string, test: string): string | null {
  const seen = new Set<string>();
  const pending = [join(tree, 'main', `${test}.test`)];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    // Comments (whole lines starting with #) often describe what a caller may do.
    const text = readFileSync(file, 'utf8').replace(/^\s*#.*$/gm, '');
    for (const pattern of SERVER_CONTROL) {
      const match = pattern.exec(text);
      if (match) return `${basename(file)}: ${match[0].trim()}`;
    }
    for (const [, sourced] of text.matchAll(SOURCE_LINE)) {
      if (sourced === undefined || sourced.includes('$')) continue;
      pending.push(join(tree, sourced));
      pending.push(join(tree, 'main', sourced));
    }
  }
  return null;
}

/**
 * Tests made here from the suite's own. `nicecache_query_cache_stale` is query_cache.test with
 * its two `SET LOCAL query_cache_type= on` steps allowed to succeed (and without its reads of
 * CLIENT_STATISTICS and USER_STATISTICS, which count the proxy's own statements): the original stops there
 * when the session variable does not reach the server, and the rest of it (hundreds of reads
 * after writes, through the server's query cache rules) must still run through the proxy as a
 * check for stale reads. Its expected result is recorded by the direct run.
 */
export const DERIVED_TESTS: ReadonlyMap<string, { from: string; edit: (text: string) => string }> =
  new Map([
    [
      'nicecache_query_cache_stale',
      {
        from: 'query_cache',
        edit: (text: string) =>
          text
            .replace(
              /^--error ER_QUERY_CACHE_IS_GLOBALY_DISABLED$/gm,
              '--error 0,ER_QUERY_CACHE_IS_GLOBALY_DISABLED',
            )
            // Per-client and per-user statistics count the proxy's own statements (all from the
            // proxy's address) and not its hits: counters, not rows.
            .replace(
              /^select SELECT_COMMANDS,ROWS_SENT,EMPTY_QUERIES from INFORMATION_SCHEMA\.\w+_STATISTICS\nwhere \w+="[^"]*";\n/gm,
              '',
            ),
      },
    ],
  ]);

/** Writes the derived tests into the copied tree. */
export function writeDerivedTests(tree: string): void {
  for (const [name, { from, edit }] of DERIVED_TESTS) {
    // Byte for byte: tests hold strings in many character sets, which UTF-8 would mangle.
    const text = readFileSync(join(tree, 'main', `${from}.test`), 'latin1');
    const edited = edit(text);
    if (edited === text) throw new Error(`${name}: the edit of ${from}.test changed nothing`);
    writeFileSync(join(tree, 'main', `${name}.test`), edited, 'latin1');
  }
}
