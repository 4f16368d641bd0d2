/**
 * What the chaos suite knows of a playbook: its steps (id, application, kind, approval, whether
 * it signs in or is an agent step, where a kill lands in the middle of its action), its example
 * inputs and how to check inputs, found as the stack finds them (`loadPlaybooks` over the same
 * folders), never from a fixed list. The one thing code cannot tell is which steps of a
 * TypeScript playbook call `ctx.faultPoint('mid-action')`: for the two demo playbooks a list
 * says; other TypeScript steps get no kill in the middle of their action.
 */
import { sep } from 'node:path';
import { inputJsonSchema } from '../../lambdas/lib/api/catalog/views.ts';
import type { Playbook } from '../../lambdas/lib/playbooks/contract.ts';
import { reportsMidAction } from '../../lambdas/lib/playbooks/declarative/actions.ts';
import type { DeclarativePlaybook } from '../../lambdas/lib/playbooks/declarative/schema.ts';
import { REPO_PLAYBOOKS_DIR } from '../../lambdas/lib/playbooks/discovery/find.ts';
import type { LoadedPlaybooks } from '../../lambdas/lib/playbooks/discovery/load.ts';
import { isSignInStep } from '../../lambdas/lib/playbooks/sign-in-step.ts';

/**
 * Where a worker kill "in the middle of the action" lands in a step: the point `mid-action` the
 * step reports (`onlyWith`: only when that input is set), or, in an agent step, the point
 * `action-recorded` of its first action (chosen and in the ledger, not yet executed).
 */
export type MidAction =
  | { point: 'mid-action'; onlyWith?: string }
  | { point: 'action-recorded'; action: number };

/** One step as the plan and the job drivers need it. */
export interface StepInfo {
  id: string;
  app: string;
  kind: 'read' | 'write';
  needsApproval: boolean;
  /** Built by the SDK's `signInStep` (or the declarative `signIn: true`). */
  signIn: boolean;
  /** An agent step: a model chooses its actions as it runs (it looks at no fixed layout). */
  agent: boolean;
  /** Where a kill in the middle of its action lands; none: the step has no such point. */
  midAction?: MidAction;
}

/** A playbook as the plan needs it. */
export interface PlaybookInfo {
  id: string;
  steps: StepInfo[];
  exampleInputs?: unknown;
  /** The fields of `inputs` that do not fit the playbook's input schema (paths, never values). */
  inputProblems(inputs: unknown): string[];
  /**
   * `inputs` with its first free-text input (a string the input schema gives no pattern,
   * format or choices) ending in ` <mark>`, when that still fits the schema; else `inputs`.
   */
  marked(inputs: unknown, mark: string): unknown;
}

/** The playbooks a run may use. */
export interface PlaybookCatalog {
  ids(): string[];
  /** The playbooks of the repository's own `playbooks/` folder (a run's default), in the order found. */
  shipped(): string[];
  has(id: string): boolean;
  /** @throws UnknownPlaybookError for an id the folders do not hold */
  playbook(id: string): PlaybookInfo;
  steps(id: string): StepInfo[];
}

/**
 * The steps of the demo playbooks' TypeScript code that call `ctx.faultPoint('mid-action')`
 * (`apply-promo` only when the job has a promo code to apply).
 */
const CODE_MID_ACTION: Readonly<Record<string, Readonly<Record<string, MidAction>>>> = {
  'checkout@1': Object.fromEntries(
    [
      'search',
      'add-item-a',
      'add-item-b',
      'set-quantity',
      'shipping-address',
      'shipping-method',
      'payment-details',
      'place-order',
    ]
      .map((id): [string, MidAction] => [id, { point: 'mid-action' }])
      .concat([['apply-promo', { point: 'mid-action', onlyWith: 'promoCode' }]]),
  ),
  'crm-billing-sync@1': {
    'update-crm-customer': { point: 'mid-action' },
    'update-billing-address': { point: 'mid-action' },
  },
  'invoice-handoff@1': { 'attach-invoice': { point: 'mid-action' } },
};

function stepsOf(playbook: Playbook, spec: DeclarativePlaybook | undefined): StepInfo[] {
  return playbook.steps.map((s, i) => {
    const declared = spec?.steps[i];
    const agent = (s as { agent?: unknown }).agent !== undefined;
    let midAction: MidAction | undefined;
    if (agent) midAction = { point: 'action-recorded', action: 1 };
    else if (declared && 'actions' in declared && reportsMidAction(declared))
      midAction = { point: 'mid-action' };
    else if (!spec) midAction = CODE_MID_ACTION[playbook.id]?.[s.id];
    return {
      id: s.id,
      app: s.app,
      kind: s.kind,
      needsApproval: s.needsApproval === true,
      signIn: isSignInStep(s),
      agent,
      ...(midAction ? { midAction } : {}),
    };
  });
}

/** The inputs, in `example`'s order, that are free text in `schema` (strings with no format, enum or const). */
function freeTextInputs(schema: Record<string, unknown>, example: unknown): string[] {
  if (typeof example !== 'object' || example === null) return [];
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.keys(example).filter((name) => {
    const p = properties[name];
    return (
      p !== undefined &&
      p.type === 'string' &&
      typeof (example as Record<string, unknown>)[name] === 'string' &&
      !['format', 'enum', 'const'].some((k) => k in p)
    );
  });
}

function infoOf(playbook: Playbook, spec: DeclarativePlaybook | undefined): PlaybookInfo {
  const problems = (inputs: unknown): string[] => {
    const checked = playbook.inputSchema.safeParse(inputs);
    return checked.success
      ? []
      : [...new Set(checked.error.issues.map((i) => i.path.join('.') || '(the inputs)'))];
  };
  return {
    id: playbook.id,
    steps: stepsOf(playbook, spec),
    ...(playbook.exampleInputs === undefined ? {} : { exampleInputs: playbook.exampleInputs }),
    inputProblems: problems,
    marked(inputs, mark) {
      // The first free-text input (a pattern may allow it) that still fits with the mark.
      const record = inputs as Record<string, unknown>;
      for (const name of freeTextInputs(inputJsonSchema(playbook), inputs)) {
        const out = { ...record, [name]: `${record[name] as string} ${mark}` };
        if (problems(out).length === 0) return out;
      }
      return inputs;
    },
  };
}

/** The catalog of the loaded playbooks (declarative ones keep their definition for `mid-action`). */
export function catalogOf(loaded: Pick<LoadedPlaybooks, 'registry' | 'playbooks'>): PlaybookCatalog {
  const specs = new Map<string, DeclarativePlaybook>();
  for (const p of loaded.playbooks) if (p.kind === 'declarative') specs.set(p.playbook.id, p.spec);
  const infos = new Map<string, PlaybookInfo>();
  const playbook = (id: string): PlaybookInfo => {
    let info = infos.get(id);
    if (!info) {
      info = infoOf(loaded.registry.get(id), specs.get(id));
      infos.set(id, info);
    }
    return info;
  };
  const shipped = loaded.playbooks
    .filter((p) => p.file.startsWith(`${REPO_PLAYBOOKS_DIR}${sep}`))
    .map((p) => p.playbook.id);
  return {
    ids: () => loaded.registry.list().map((p) => p.id),
    shipped: () => [...shipped],
    has: (id) => loaded.registry.sourceOf(id) !== undefined,
    playbook,
    steps: (id) => playbook(id).steps,
  };
}
