/**
 * The actions an agent step's model may choose, as plain data: what the ledger records
 * (`action-chosen`), what a replay re-executes, and what the tools offered to a hosted model
 * describe. Nothing else can be done by a model: the tools are exactly these.
 */

/** An element as a person would name it: its ARIA role and accessible name (exact). */
export interface Target {
  role: string;
  name: string;
}

export type AgentAction =
  | { name: 'click'; target: Target }
  | { name: 'fill'; target: Target; value: string }
  | { name: 'select'; target: Target; option: string }
  | { name: 'check'; target: Target; checked: boolean }
  | { name: 'press'; key: string }
  | { name: 'goto'; url: string }
  | { name: 'done'; summary: string }
  | { name: 'ask_person'; question: string };

export type ActionName = AgentAction['name'];

export const ACTION_NAMES: readonly ActionName[] = [
  'click',
  'fill',
  'select',
  'check',
  'press',
  'goto',
  'done',
  'ask_person',
];

/** Roles a target may have: the ones a form is made of (a model naming another is refused). */
export const TARGET_ROLES = [
  'button',
  'link',
  'textbox',
  'searchbox',
  'combobox',
  'listbox',
  'checkbox',
  'radio',
  'spinbutton',
  'switch',
  'tab',
  'menuitem',
  'option',
] as const;

/** The action's target, for actions that have one. */
export function targetOf(action: AgentAction): Target | undefined {
  return 'target' in action ? action.target : undefined;
}

/** One line a person (and a model's history) reads: `fill textbox "Email" = "{{secret:email}}"`. */
export function describeAction(action: AgentAction): string {
  const t = targetOf(action);
  const at = t ? ` ${t.role} "${t.name}"` : '';
  switch (action.name) {
    case 'fill':
      return `fill${at} = ${JSON.stringify(action.value)}`;
    case 'select':
      return `select${at} = ${JSON.stringify(action.option)}`;
    case 'check':
      return `check${at} = ${action.checked}`;
    case 'press':
      return `press ${action.key}`;
    case 'goto':
      return `goto ${action.url}`;
    case 'done':
      return `done: ${action.summary}`;
    case 'ask_person':
      return `ask_person: ${action.question}`;
    default:
      return `${action.name}${at}`;
  }
}

/**
 * Reads an action back from a ledger entry's detail (or a model's tool call): undefined when it
 * is not one of the actions above with the right arguments, so nothing unchecked is executed.
 */
export function parseAction(value: unknown): AgentAction | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const str = (k: string): string | undefined => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  const target = parseTarget(v.target);
  switch (v.name) {
    case 'click':
      return target ? { name: 'click', target } : undefined;
    case 'fill': {
      const value = str('value');
      return target && value !== undefined ? { name: 'fill', target, value } : undefined;
    }
    case 'select': {
      const option = str('option');
      return target && option !== undefined ? { name: 'select', target, option } : undefined;
    }
    case 'check':
      return target && typeof v.checked === 'boolean'
        ? { name: 'check', target, checked: v.checked }
        : undefined;
    case 'press': {
      const key = str('key');
      return key ? { name: 'press', key } : undefined;
    }
    case 'goto': {
      const url = str('url');
      return url ? { name: 'goto', url } : undefined;
    }
    case 'done':
      return { name: 'done', summary: str('summary') ?? '' };
    case 'ask_person': {
      const question = str('question');
      return question ? { name: 'ask_person', question } : undefined;
    }
    default:
      return undefined;
  }
}

function parseTarget(value: unknown): Target | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { role, name } = value as Record<string, unknown>;
  if (typeof role !== 'string' || typeof name !== 'string') return undefined;
  if (!(TARGET_ROLES as readonly string[]).includes(role)) return undefined;
  return { role, name };
}
