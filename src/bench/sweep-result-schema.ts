/**
 * Checks that a value (typically a JSON report read back) is a `SweepResult` of this version.
 *
 * The shape is the published JSON Schema next to this file, sweep-result.schema.json (every
 * field present with its type, counts whole and non-negative, measures finite and non-negative,
 * no field the type does not declare, so a change of shape cannot slip past without a new
 * `version`), checked with Ajv. What a schema cannot say is checked here: thread counts
 * ascending and distinct, target names unique, steps and probes naming declared targets and
 * thread counts in the order the sweep runs them, timestamps that parse, finishedAt not before
 * startedAt.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import type { ErrorObject } from 'ajv';

/** The JSON Schema of the report (its `version` const is SWEEP_RESULT_VERSION's). */
export const SWEEP_RESULT_SCHEMA: object = JSON.parse(
  readFileSync(new URL('./sweep-result.schema.json', import.meta.url), 'utf8'),
) as object;

// strictNumbers: NaN and Infinity are not numbers a report can hold (JSON cannot write them).
const validateShape = new Ajv({
  allErrors: true,
  strictNumbers: true,
  verbose: true,
}).compile(SWEEP_RESULT_SCHEMA);

/**
 * The problems found, each as `path: what is wrong`; empty when the value is valid. Problems of
 * shape come first, then those of cross-reference (checked on whatever parts are well formed).
 */
export function validateSweepResult(value: unknown): string[] {
  const problems = validateShape(value) ? [] : (validateShape.errors ?? []).map(describeError);
  if (!isRecord(value)) return problems;
  const problem = (path: string, message: string): void => {
    problems.push(`${path}: ${message}`);
  };
  const started = typeof value['startedAt'] === 'string' ? Date.parse(value['startedAt']) : 0;
  const finished = typeof value['finishedAt'] === 'string' ? Date.parse(value['finishedAt']) : 0;
  if (Number.isNaN(started)) problem('startedAt', 'not a date and time');
  if (Number.isNaN(finished)) problem('finishedAt', 'not a date and time');
  if (finished < started) problem('finishedAt', 'earlier than startedAt');

  // Null when the list itself is malformed: the schema's problem says so, and every reference
  // to it would only repeat that.
  const options = value['options'];
  const threadList = isRecord(options) ? options['threads'] : null;
  const threads = Array.isArray(threadList) ? new Set<number>() : null;
  let previous = 0;
  recordsOf(threadList).forEach((count, index) => {
    if (typeof count !== 'number') return;
    if (count <= previous) {
      problem(`options.threads[${index}]`, 'thread counts must be ascending and distinct');
    }
    previous = count;
    threads?.add(count);
  });

  const targets = Array.isArray(value['targets']) ? new Set<string>() : null;
  recordsOf(value['targets']).forEach((target, index) => {
    const name = isRecord(target) ? target['name'] : null;
    if (typeof name !== 'string' || targets === null) return;
    if (targets.has(name)) problem(`targets[${index}].name`, `'${name}' repeated`);
    targets.add(name);
  });

  const steps = new Set<string>();
  let previousThreads = 0;
  recordsOf(value['steps']).forEach((step, index) => {
    if (!isRecord(step)) return;
    const path = `steps[${index}]`;
    const { target, threads: count } = step;
    if (typeof target === 'string' && targets !== null && !targets.has(target)) {
      problem(`${path}.target`, `'${target}' is not a declared target`);
    }
    if (typeof count !== 'number') return;
    if (threads !== null && !threads.has(count)) {
      problem(`${path}.threads`, `${count} is not in options.threads`);
    }
    // The sweep runs every target at one thread count before the next, ascending.
    if (count < previousThreads) {
      problem(
        `${path}.threads`,
        `${count} after ${previousThreads}: steps must run in ascending thread order`,
      );
    }
    previousThreads = count;
    const key = `${String(target)}\u0000${count}`;
    if (steps.has(key)) problem(path, `a second step of '${String(target)}' at ${count} threads`);
    steps.add(key);
  });

  const probes = new Set<string>();
  recordsOf(value['probes']).forEach((probe, index) => {
    if (!isRecord(probe)) return;
    const path = `probes[${index}]`;
    const { kind, target, threads: count } = probe;
    if (kind === 'node-floor' && target !== null) {
      problem(`${path}.target`, 'the Node floor probe names no target');
    }
    if (kind === 'hits') {
      if (target === null) problem(`${path}.target`, 'a hit probe names its target');
      else if (typeof target === 'string' && targets !== null && !targets.has(target)) {
        problem(`${path}.target`, `'${target}' is not a declared target`);
      }
    }
    if (typeof count !== 'number') return;
    if (threads !== null && !threads.has(count)) {
      problem(`${path}.threads`, `${count} is not in options.threads`);
    }
    const key = `${String(kind)}\u0000${String(target)}\u0000${count}`;
    if (probes.has(key)) problem(path, 'a second probe of the same kind and target');
    probes.add(key);
  });
  return problems;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The elements of an array, or none for anything else. */
function recordsOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

/** What each JSON type is called in a problem. */
const TYPE_NAMES: Record<string, string> = {
  integer: 'a whole number',
  number: 'a finite number',
  string: 'a string',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

/**
 * An Ajv error as `path: what is wrong`, the path written as the report's fields are, with the
 * value that is wrong (Ajv's `verbose` errors carry it).
 */
function describeError(error: ErrorObject): string {
  const path =
    error.instancePath === ''
      ? ''
      : error.instancePath
          .slice(1)
          .split('/')
          .map((part, index) =>
            /^\d+$/.test(part) ? `[${part}]` : index === 0 ? part : `.${part}`,
          )
          .join('');
  const params = error.params as Record<string, unknown>;
  const field = (name: unknown): string => `${path === '' ? '' : `${path}.`}${String(name)}`;
  const got = `, got ${describe(error.data)}`;
  const at = path === '' ? '(root)' : path;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${field(params['additionalProperty'])}: unexpected field`;
    case 'required':
      return `${field(params['missingProperty'])}: missing`;
    case 'type': {
      const types = String(params['type']).split(',');
      return `${at}: expected ${types.map((type) => TYPE_NAMES[type] ?? type).join(' or ')}${got}`;
    }
    case 'minimum':
      return params['limit'] === 0
        ? `${at}: expected a non-negative number${got}`
        : `${at}: expected at least ${String(params['limit'])}${got}`;
    case 'exclusiveMinimum':
      return `${at}: expected a positive number${got}`;
    case 'maximum':
      return `${at}: expected at most ${Math.round(Number(params['limit']))}${got}`;
    case 'pattern':
      return error.schemaPath.includes('timestamp')
        ? `${at}: expected an ISO 8601 date and time${got}`
        : `${at}: expected a CPU list such as 0-1${got}`;
    case 'enum':
      return `${at}: expected one of ${(params['allowedValues'] as unknown[]).join(', ')}${got}`;
    case 'const':
      return `${at}: expected ${String(params['allowedValue'])}${got}`;
    case 'minItems':
    case 'minLength':
      return `${at}: empty`;
    default:
      return `${at}: ${error.message ?? error.keyword}`;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  }
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
