/**
 * EventBridge event patterns, as far as rules use them: a field matches a list of values (any
 * one), nested objects match nested fields, and the content filters `prefix`, `suffix`,
 * `anything-but`, `exists` and `numeric` (comparisons) test one value. Every field of the
 * pattern must match (AND); the values of one field are alternatives (OR); an array in the
 * event matches when any of its elements does.
 */

type Pattern = Record<string, unknown>;

function matchesFilter(filter: Record<string, unknown>, value: unknown, present: boolean): boolean {
  if ('exists' in filter) return filter.exists === present;
  if (!present) return false;
  if ('prefix' in filter) return typeof value === 'string' && value.startsWith(String(filter.prefix));
  if ('suffix' in filter) return typeof value === 'string' && value.endsWith(String(filter.suffix));
  if ('anything-but' in filter) {
    const but = filter['anything-but'];
    if (but && typeof but === 'object' && !Array.isArray(but)) {
      const inner = but as Record<string, unknown>;
      if ('prefix' in inner) return !(typeof value === 'string' && value.startsWith(String(inner.prefix)));
    }
    return ![but].flat().includes(value as never);
  }
  if ('numeric' in filter) {
    const ops = filter.numeric as unknown[];
    if (typeof value !== 'number') return false;
    for (let i = 0; i + 1 < ops.length; i += 2) {
      const [op, n] = [ops[i], Number(ops[i + 1])];
      const ok =
        (op === '=' && value === n) ||
        (op === '<' && value < n) ||
        (op === '<=' && value <= n) ||
        (op === '>' && value > n) ||
        (op === '>=' && value >= n);
      if (!ok) return false;
    }
    return true;
  }
  return false;
}

function matchesValue(allowed: unknown[], value: unknown, present: boolean): boolean {
  const values = Array.isArray(value) ? value : [value];
  return allowed.some((a) =>
    a !== null && typeof a === 'object'
      ? values.some((v) => matchesFilter(a as Record<string, unknown>, v, present))
      : present && values.some((v) => v === a),
  );
}

/**
 * Does `event` (an EventBridge event: `source`, `detail-type`, `detail`, ...) match `pattern`?
 *
 * @example
 * matchesPattern({ source: ['aws.states'], detail: { status: ['FAILED', 'ABORTED'] } }, event)
 */
export function matchesPattern(pattern: Pattern, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([field, rule]) => {
    const present = Object.hasOwn(event, field) && event[field] !== undefined;
    const value = event[field];
    if (Array.isArray(rule)) return matchesValue(rule, value, present);
    if (rule && typeof rule === 'object') {
      if (!present || value === null || typeof value !== 'object' || Array.isArray(value)) {
        // A nested pattern of `exists: false` filters still matches a missing object.
        return Object.values(rule).every(
          (r) =>
            Array.isArray(r) &&
            r.some((x) => x && typeof x === 'object' && (x as { exists?: unknown }).exists === false),
        );
      }
      return matchesPattern(rule as Pattern, value as Record<string, unknown>);
    }
    return false;
  });
}
