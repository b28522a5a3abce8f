/**
 * The benchmark's topology: CPU lists as the kernel writes them, the split of this machine's CPUs
 * between the server and the rest, and pinning a real process — every one of its threads must end
 * up with the CPUs asked, as /proc/PID/task/TID/status says, including threads it starts later;
 * and reading every thread's CPUs while threads come and go.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import {
  TopologyError,
  formatCpuList,
  ownCpus,
  parseCpuList,
  pinProcess,
  planSplit,
  processCpus,
  threadCpuLists,
  threadCpus,
} from '../../src/bench/topology.ts';

describe('CPU lists', () => {
  test('parse what the kernel writes', () => {
    assert.deepEqual(parseCpuList('0'), [0]);
    assert.deepEqual(parseCpuList('0-3'), [0, 1, 2, 3]);
    assert.deepEqual(parseCpuList('5,0-1,3\n'), [0, 1, 3, 5]);
    assert.throws(() => parseCpuList('1-0'), TopologyError);
    assert.throws(() => parseCpuList('a'), TopologyError);
    assert.throws(() => parseCpuList(''), TopologyError);
  });

  test('format back the shortest way', () => {
    assert.equal(formatCpuList([1]), '1');
    assert.equal(formatCpuList([0, 1]), '0,1');
    assert.equal(formatCpuList([3, 0, 1, 2, 2]), '0-3');
    assert.equal(formatCpuList([0, 2, 3, 4, 7]), '0,2-4,7');
    assert.equal(formatCpuList(parseCpuList('0-5,9')), '0-5,9');
  });
});

describe('planSplit', () => {
  test('two cores: server on 1, client and proxy on 0', () => {
    assert.deepEqual(planSplit([0, 1]), { server: '1', clientAndProxy: '0' });
  });

  test('more cores: the upper half to the server, the larger half to the client', () => {
    assert.deepEqual(planSplit([0, 1, 2, 3]), { server: '2,3', clientAndProxy: '0,1' });
    assert.deepEqual(planSplit([0, 1, 2]), { server: '2', clientAndProxy: '0,1' });
    assert.deepEqual(planSplit([2, 4, 6, 8, 10, 12, 14, 16]), {
      server: '10,12,14,16',
      clientAndProxy: '2,4,6,8',
    });
  });

  test('one CPU cannot be split', () => {
    assert.throws(() => planSplit([3]), /at least 2 CPUs.*may use 1 \(3\)/);
  });
});

describe('pinProcess', () => {
  const cpus = ownCpus();

  test('every thread of a running process, and the threads it starts afterwards', async (t) => {
    if (cpus.length < 2) {
      t.skip('needs two CPUs to tell a pinned process from an unpinned one');
      return;
    }
    const target = String(cpus.at(-1));
    // A Node process has several threads from the start (V8's platform, libuv); on a line from
    // stdin it starts a worker thread, which must inherit the pin.
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { Worker } from 'node:worker_threads';
         process.stdin.once('data', () => {
           const worker = new Worker('setInterval(() => {}, 1000)', { eval: true });
           worker.once('online', () => console.log('worker'));
         });
         console.log('ready');`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    try {
      await once(child.stdout, 'data');
      const pid = child.pid!;
      assert.equal(processCpus(pid), formatCpuList(cpus), 'unpinned: every CPU');
      const before = readdirSync(`/proc/${pid}/task`).length;
      assert.ok(before > 1, 'a Node process has several threads');

      pinProcess(pid, target);
      assert.equal(processCpus(pid), target);
      child.stdin.write('start a worker\n');
      await once(child.stdout, 'data');
      const tasks = readdirSync(`/proc/${pid}/task`).map(Number);
      assert.ok(tasks.length > before, 'the worker added threads');
      for (const tid of tasks) assert.deepEqual(threadCpus(pid, tid), [Number(target)]);
    } finally {
      child.kill();
      await once(child, 'exit');
    }
  });

  test('a process that is gone is an error, and has no CPUs', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'exit');
    assert.equal(processCpus(child.pid!), null);
    assert.throws(() => pinProcess(child.pid!, String(cpus[0])), TopologyError);
  });
});

describe('threadCpuLists', () => {
  test('reads every thread while threads come and go; null for a process that is gone', async () => {
    const { Worker } = await import('node:worker_threads');
    const own = formatCpuList(ownCpus());
    let churning = true;
    // Threads that start and end as fast as they can, beside the reads.
    const churn = (async () => {
      while (churning) {
        const worker = new Worker('0', { eval: true });
        await once(worker, 'exit');
      }
    })();
    let reads = 0;
    const until = Date.now() + 1500;
    try {
      while (Date.now() < until) {
        const lists = threadCpuLists(process.pid);
        assert.ok(lists !== null && lists.length >= 1);
        for (const list of lists) assert.equal(list, own);
        reads++;
        // Let the churn run between reads.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      churning = false;
      await churn;
    }
    assert.ok(reads > 10, `${reads} reads`);
    assert.equal(threadCpuLists(2 ** 22 + 7), null);
  });
});
