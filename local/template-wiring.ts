/**
 * What the local stack takes from the synthesized template, so it runs what AWS would run:
 * each function's IAM policy (`local/iam/`), the variables that name resources it binds (the
 * event bus a function puts events on), the event buses, and the EventBridge rules with their
 * targets (`local/events/rules.ts`).
 */
import { resolve } from 'node:path';
import type { LocalRule } from './events/bus.ts';
import { templateRules } from './events/rules.ts';
import { eventBusName, type LocalResources, localBinding } from './iam/binding.ts';
import { type EnforcementSpec, type StackPolicies, stackPolicies, synthesizedTemplate } from './iam/index.ts';
import { createResolver, logicalIdOf, resourcesOfType } from './iam/template.ts';

/**
 * Variables of a function's environment in the template that the local stack takes as they
 * are (resolved to local names): they name a resource, and a function bound to none must not
 * get one locally either. Everything else (endpoints, the secret store, applications) is local.
 */
const TAKEN_VARIABLES = ['EVENT_BUS_NAME'] as const;

export interface TemplateWiring {
  /** The template file. */
  file: string;
  policies: StackPolicies;
  /** A function's policy, by construct id. */
  spec(constructId: string): EnforcementSpec;
  /** The variables of `TAKEN_VARIABLES` a function's template environment sets, resolved. */
  variables(constructId: string): Record<string, string>;
  /** The template's event buses, by their local names. */
  buses: string[];
  /** The template's rules, with targets among `functionArns`; lines for what is left out go to `warnings`. */
  rules(functionArns: ReadonlySet<string>, warnings: string[]): LocalRule[];
}

/** Reads (or synthesizes) the template and binds it to the local stack's resources. */
export async function wireTemplate(
  options: { template?: string; log: (line: string) => void },
  local: LocalResources,
): Promise<TemplateWiring> {
  const file = options.template ? resolve(options.template) : await synthesizedTemplate({ log: options.log });
  const policies = stackPolicies(file, local);
  const { template } = policies;
  const binding = localBinding(template, local);
  const resolveValue = createResolver(template, binding);
  return {
    file,
    policies,
    spec(constructId) {
      const spec = policies.specs[constructId];
      if (!spec) throw new Error(`the template ${file} has no policy for ${constructId}`);
      return spec;
    },
    variables(constructId) {
      const id = logicalIdOf(template, 'AWS::Lambda::Function', constructId);
      const props = id ? template.Resources[id]?.Properties : undefined;
      const all = (resolveValue(
        (props?.Environment as { Variables?: unknown } | undefined)?.Variables ?? {},
      ) ?? {}) as Record<string, unknown>;
      return Object.fromEntries(
        TAKEN_VARIABLES.filter((k) => typeof all[k] === 'string').map((k) => [k, String(all[k])]),
      );
    },
    buses: resourcesOfType(template, 'AWS::Events::EventBus').map((id) =>
      eventBusName(local.stackName, id, template.Resources[id]?.Properties),
    ),
    rules: (functionArns, warnings) => templateRules(template, binding, functionArns, warnings),
  };
}
