/**
 * What a first write to a page costs on this machine: the CPU time (user + system) of writing
 * one byte in each 4 KiB page of a fresh SharedArrayBuffer, as the result store's arena is
 * written by the fills that reach a page the kernel has not given it yet, against writing the
 * same pages again. With `bench/thread-cpu.sh`'s minor faults per query, this prices the part
 * of a miss that fills which a store pays once per page of its budget, not per fill.
 *
 *   node bench/page-faults.ts [MiB per round, default 256] [rounds, default 3]
 */
const mib = Number(process.argv[2] ?? 256);
const rounds = Number(process.argv[3] ?? 3);
const PAGE = 4096;
const bytes = mib * 1024 * 1024;
const pages = bytes / PAGE;

/** CPU µs a page of writing one byte in each page of `memory`. */
function writePages(memory: Uint8Array, value: number): number {
  const started = process.cpuUsage();
  for (let at = 0; at < memory.length; at += PAGE) memory[at] = value;
  const { user, system } = process.cpuUsage(started);
  return (user + system) / pages;
}

console.log(`${mib} MiB a round, ${pages} pages of ${PAGE} bytes`);
console.log('| round | first write, µs a page | second write, µs a page |');
console.log('|---|---|---|');
for (let round = 1; round <= rounds; round++) {
  const memory = new Uint8Array(new SharedArrayBuffer(bytes));
  const first = writePages(memory, 1);
  const second = writePages(memory, 2);
  console.log(`| ${round} | ${first.toFixed(2)} | ${second.toFixed(3)} |`);
}
