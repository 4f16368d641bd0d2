/**
 * The inputs of each run of `npm run playbook -- test`. Every run gets inputs of its own, so a
 * record an earlier run left (a note with the same title, an order for the same basket) cannot
 * satisfy a later run's check or probe: the first free-text input is marked with the run
 * (` run-<id>-<n>` appended), or the author gives a list, one inputs object per run.
 */
import type { Playbook } from '../../lambdas/lib/playbooks/contract.ts';
import { OptionError } from './options.ts';

/** Where the first free-text input is (its path in the inputs object), if any takes a mark. */
export function markablePath(playbook: Playbook, inputs: unknown): (string | number)[] | undefined {
  for (const path of stringPaths(inputs)) {
    const marked = setAt(inputs, path, `${String(getAt(inputs, path))} run-mark-0`);
    if (playbook.inputSchema.safeParse(marked).success) return path;
  }
  return undefined;
}

/**
 * The inputs for each of `runs` runs: `given` when it is a list (one per run), else `base` with
 * its first free-text input marked with the run. `marked` says which input took the mark.
 *
 * @throws OptionError when a list has fewer inputs than there are runs, or an entry does not fit
 *   the playbook's inputs (named by its index, never by what it holds)
 */
export function inputsPerRun(
  playbook: Playbook,
  base: unknown,
  runs: number,
  runId: string,
  mark?: string,
): { inputs: unknown[]; marked: string | undefined } {
  if (Array.isArray(base)) {
    if (base.length < runs)
      throw new OptionError(
        '--inputs',
        `the list has ${base.length} inputs; this test makes ${runs} runs, each with inputs of its own`,
      );
    base.forEach((entry, i) => {
      if (!playbook.inputSchema.safeParse(entry).success)
        throw new OptionError('--inputs', `entry ${i} does not fit ${playbook.id}'s inputs`);
    });
    return { inputs: base.slice(0, runs), marked: undefined };
  }
  const path = mark === undefined ? markablePath(playbook, base) : chosenPath(playbook, base, mark);
  if (!path) return { inputs: Array.from({ length: runs }, () => base), marked: undefined };
  return {
    inputs: Array.from({ length: runs }, (_, i) =>
      setAt(base, path, `${String(getAt(base, path))} run-${runId}-${i}`),
    ),
    marked: path.join('.'),
  };
}

/**
 * The input `--mark` names (a dotted path), or none for `none`.
 * @throws OptionError when it is not a text input, or a mark makes it invalid
 */
function chosenPath(playbook: Playbook, inputs: unknown, mark: string): (string | number)[] | undefined {
  if (mark === 'none') return undefined;
  const path = mark.split('.').map((k) => (/^\d+$/.test(k) ? Number(k) : k));
  if (typeof getAt(inputs, path) !== 'string')
    throw new OptionError('--mark', `${mark} is not a text input of ${playbook.id}`);
  if (
    !playbook.inputSchema.safeParse(setAt(inputs, path, `${String(getAt(inputs, path))} run-mark-0`)).success
  )
    throw new OptionError('--mark', `${mark} marked with the run no longer fits ${playbook.id}'s inputs`);
  return path;
}

/** Paths of the string values of `value`, depth first, in the order its keys are written. */
function stringPaths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return at.length > 0 ? [at] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringPaths(v, [...at, i]));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => stringPaths(v, [...at, k]));
  return [];
}

function getAt(value: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], value);
}

function setAt(value: unknown, path: readonly (string | number)[], to: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return to;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? setAt(v, rest, to) : v));
  const o = (value ?? {}) as Record<string, unknown>;
  return { ...o, [head]: setAt(o[head], rest, to) };
}
