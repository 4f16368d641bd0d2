/**
 * An approval bound to the exact effect (`approve: 'effect'`): what a write would submit is
 * sealed (secrets masked, hashed), the approval is recorded against the hash, and at execution
 * the write commits only if the page would submit exactly what was approved.
 */
import { createHash } from 'node:crypto';
import type { LedgerEntry } from '../ledger/types.ts';
import type { Effect, EffectField, Step } from '../playbooks/contract.ts';
import { maskKnownSecrets } from '../redact.ts';
import { entriesFor } from './history.ts';

/** How a secret's value shows: never the value, and never its hash (a short PIN's hash gives it away). */
export const SECRET_VALUE = '[secret]';

/** An effect as the ledger keeps it and a person sees it, with the hash the approval binds to. */
export interface SealedEffect {
  effect: Effect;
  /** Hex sha256 of the canonical effect. */
  hash: string;
}

/** Is the step approved on its effect (prepared, shown, then committed only as approved)? */
export function approvesEffect(step: Pick<Step, 'approve'>): boolean {
  return step.approve === 'effect';
}

/**
 * The effect with every secret masked (fields marked secret, and registered secrets anywhere in
 * a value), and its hash. A secret's change is therefore not seen: secrets come from the vault,
 * not from the page or the inputs.
 */
export function sealEffect(effect: Effect): SealedEffect {
  const fields: EffectField[] = effect.fields.map((f) => ({
    name: f.name,
    value: f.secret ? SECRET_VALUE : maskKnownSecrets(f.value),
    ...(f.secret ? { secret: true as const } : {}),
  }));
  const canonical = JSON.stringify(fields.map((f) => [f.name, f.value]));
  return { effect: { fields }, hash: createHash('sha256').update(canonical).digest('hex') };
}

/** One difference between the effect approved and the one the page would submit now. */
export interface EffectChange {
  name: string;
  /** The approved value; absent: the field is new. */
  before?: string;
  /** The value now; absent: the field is gone. */
  after?: string;
}

/** The fields that differ between `before` and `after`, in the order they appear. */
export function effectChanges(before: Effect, after: Effect): EffectChange[] {
  const was = new Map(before.fields.map((f) => [f.name, f.value]));
  const now = new Map(after.fields.map((f) => [f.name, f.value]));
  const changes: EffectChange[] = [];
  for (const [name, value] of now) {
    if (!was.has(name)) changes.push({ name, after: value });
    else if (was.get(name) !== value) changes.push({ name, before: was.get(name) as string, after: value });
  }
  for (const [name, value] of was) if (!now.has(name)) changes.push({ name, before: value });
  return changes;
}

/** Where a step approved on its effect stands, from its ledger entries. */
export type EffectApproval =
  /** Nothing prepared yet, or prepared and not decided. */
  | { state: 'none' }
  | { state: 'pending'; prepared: SealedEffect }
  /** Approved: the hash the decision was recorded against, and the effect it showed. */
  | { state: 'approved'; hash: string; prepared: SealedEffect; by: string };

/** The latest effect prepared for `step` and the decision on it, if any. */
export function effectApproval(entries: readonly LedgerEntry[], step: string): EffectApproval {
  let prepared: SealedEffect | undefined;
  let approved: { hash: string; by: string } | undefined;
  for (const e of entriesFor(entries, step)) {
    if (e.type === 'effect-prepared' || e.type === 'effect-changed') {
      prepared = sealedOf(e);
      approved = undefined;
    } else if (e.type === 'approval-recorded' && prepared) {
      approved =
        e.detail?.decision === 'approve'
          ? { hash: String(e.detail?.effectHash ?? prepared.hash), by: e.actor ?? 'a person' }
          : undefined;
    }
  }
  if (!prepared) return { state: 'none' };
  return approved ? { state: 'approved', prepared, ...approved } : { state: 'pending', prepared };
}

/** The effect an `effect-prepared` or `effect-changed` entry holds. */
export function sealedOf(entry: Pick<LedgerEntry, 'detail'>): SealedEffect {
  const effect = entry.detail?.effect as Effect | undefined;
  return { effect: { fields: effect?.fields ?? [] }, hash: String(entry.detail?.hash ?? '') };
}
