/**
 * Which action lists a playbook that shares its cache (`actionCache: 'shared'`) may keep for
 * every tenant: those whose every text is the playbook's own. Placeholders stand for the job's
 * values; any other text (a target's name, an option, a URL) must be found in the goal or field
 * templates as written (case aside), so it is nothing a tenant's page showed. A target's role
 * and a key's name are words of the action vocabulary. The model's closing summary is not
 * kept in a shared entry (it is never executed, and it is written from the page).
 */

const PLACEHOLDER = /\{\{[^{}]*\}\}/g;

/** Keys whose string values are vocabulary, not text: an action's kind, a target's role, a key's name. */
const VOCABULARY = new Set(['role', 'key']);

/** The texts of a goal template (`goalTemplateOf`): the goal, and each field's label and value. */
function templateTexts(goalTemplate: string): string[] {
  try {
    const parsed = JSON.parse(goalTemplate) as { goal?: unknown; fields?: unknown };
    const fields = Array.isArray(parsed.fields) ? parsed.fields.flat() : [];
    return [parsed.goal, ...fields]
      .filter((t): t is string => typeof t === 'string')
      .map((t) => t.toLowerCase());
  } catch {
    return [];
  }
}

/** Every string in `value` but vocabulary. */
function textsOf(value: unknown, key: string, out: string[]): void {
  if (typeof value === 'string') {
    if (!VOCABULARY.has(key)) out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) textsOf(v, key, out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) textsOf(v, k, out);
  }
}

/**
 * The list as a shared entry keeps it (a `done` without its summary), or undefined when some
 * text in it is not the playbook's own (then the entry stays the tenant's).
 */
export function sharedForm(
  actions: readonly Record<string, unknown>[],
  goalTemplate: string,
): Record<string, unknown>[] | undefined {
  const own = templateTexts(goalTemplate);
  const kept = actions.map((a) => (a.name === 'done' ? { name: 'done', summary: '' } : { ...a }));
  const texts: string[] = [];
  for (const action of kept) {
    for (const [k, v] of Object.entries(action)) if (k !== 'name') textsOf(v, k, texts);
  }
  const ownText = (text: string): boolean =>
    text.replace(PLACEHOLDER, '').trim() === '' || own.some((t) => t.includes(text.toLowerCase()));
  return texts.every(ownText) ? kept : undefined;
}
