import type { Evidence } from '../ledger/types.ts';

/**
 * Fills `{{inputs.name}}` and `{{evidence.step.key}}` in a goal or field value from the job's
 * inputs and earlier steps' evidence. `{{secret:name}}` is left as it is: a placeholder the
 * model sees and the step substitutes at execution. An unknown name stays visible
 * (`{{inputs.missing}}`) rather than becoming an empty string the model would act on.
 */
export function fillTemplate(
  text: string,
  scope: { inputs: unknown; evidence: Readonly<Record<string, Evidence>> },
): string {
  return text.replace(
    /\{\{\s*(inputs|evidence)\.([A-Za-z0-9_.-]+)\s*\}\}/g,
    (whole, root: string, path: string) => {
      let value: unknown = root === 'inputs' ? scope.inputs : scope.evidence;
      for (const part of path.split('.')) {
        if (typeof value !== 'object' || value === null) return whole;
        value = (value as Record<string, unknown>)[part];
      }
      return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : whole;
    },
  );
}
