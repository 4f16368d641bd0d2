/**
 * What the local stack takes from the synthesized template, so it runs what AWS would run:
 * each function's IAM policy (`local/iam/`), the variables that name resources it binds (the
 * event bus a function puts events on), the event buses, and the EventBridge rules with their
 * targets (`local/events/rules.ts`).
 */
import { resolve } from 'node:path';
import { BROWSER_ACCESS_VARIABLE } from '../lambdas/lib/browser/secret-key.ts';
import type { LocalRule } from './events/bus.ts';
import { templateRules } from './events/rules.ts';
import { eventBusName, type LocalResources, localBinding } from './iam/binding.ts';
import { TemplateError } from './iam/errors.ts';
import { type EnforcementSpec, type StackPolicies, stackPolicies, synthesizedTemplate } from './iam/index.ts';
import { createResolver, logicalIdOf, resourcesOfType, type TemplateResource } from './iam/template.ts';

/**
 * Variables of a function's environment in the template that the local stack takes as they
 * are (resolved to local names): a resource's name, which a function bound to none must not
 * get locally either, and Node's options (`--enable-source-maps` with `belay:sourceMaps`), so a
 * worker starts as the deployed function does. Everything else (endpoints, the secret store,
 * applications) is local.
 */
const TAKEN_VARIABLES = ['EVENT_BUS_NAME', 'NODE_OPTIONS'] as const;

/**
 * Variables the local stack takes only when the template sets them to `none`: a function
 * deployed with no browser access runs without it locally too, while one that has it gets
 * the local browser service.
 */
const TAKEN_WHEN_NONE = [BROWSER_ACCESS_VARIABLE] as const;

/**
 * The credential store's variable: a function the template binds no store (`none`, or not
 * set) runs with `none` locally, so a read is refused as in AWS; one it binds gets the local store.
 */
const SECRETS_VARIABLE = 'BELAY_SECRETS';

export interface TemplateWiring {
  /** The template file. */
  file: string;
  policies: StackPolicies;
  /** A function's policy, by construct id. */
  spec(constructId: string): EnforcementSpec;
  /**
   * The variables of `TAKEN_VARIABLES` a function's template environment sets, resolved, those
   * of `TAKEN_WHEN_NONE` it sets to `none`, and `BELAY_SECRETS=none` when it binds no store.
   */
  variables(constructId: string): Record<string, string>;
  /** One variable of a function's template environment, resolved to the local resources (`undefined` when unset). */
  variable(constructId: string, name: string): string | undefined;
  /** A function's timeout in the template (`Timeout`), in ms. */
  timeoutMs(constructId: string): number;
  /** A function's memory in the template (`MemorySize`), in MB (Lambda's 128 when it says none). */
  memoryMb(constructId: string): number;
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
  const functionResource = (constructId: string): TemplateResource | undefined => {
    const id = logicalIdOf(template, 'AWS::Lambda::Function', constructId);
    return id ? template.Resources[id] : undefined;
  };
  return {
    file,
    policies,
    spec(constructId) {
      const spec = policies.specs[constructId];
      if (!spec) throw new Error(`the template ${file} has no policy for ${constructId}`);
      return spec;
    },
    variables(constructId) {
      const props = functionResource(constructId)?.Properties;
      const all = (resolveValue(
        (props?.Environment as { Variables?: unknown } | undefined)?.Variables ?? {},
      ) ?? {}) as Record<string, unknown>;
      return Object.fromEntries([
        ...TAKEN_VARIABLES.filter((k) => typeof all[k] === 'string').map((k) => [k, String(all[k])]),
        ...TAKEN_WHEN_NONE.filter((k) => all[k] === 'none').map((k) => [k, 'none']),
        ...(typeof all[SECRETS_VARIABLE] === 'string' && all[SECRETS_VARIABLE] !== 'none'
          ? []
          : [[SECRETS_VARIABLE, 'none']]),
      ]);
    },
    variable(constructId, name) {
      const props = functionResource(constructId)?.Properties;
      const all = (resolveValue(
        (props?.Environment as { Variables?: unknown } | undefined)?.Variables ?? {},
      ) ?? {}) as Record<string, unknown>;
      return typeof all[name] === 'string' ? all[name] : undefined;
    },
    timeoutMs(constructId) {
      const timeout = functionResource(constructId)?.Properties?.Timeout;
      if (typeof timeout !== 'number' || !(timeout > 0))
        throw new TemplateError(`the template ${file} gives ${constructId} no Timeout`);
      return timeout * 1000;
    },
    memoryMb(constructId) {
      const memory = functionResource(constructId)?.Properties?.MemorySize;
      return typeof memory === 'number' && memory >= 128 ? memory : 128;
    },
    buses: resourcesOfType(template, 'AWS::Events::EventBus').map((id) =>
      eventBusName(local.stackName, id, template.Resources[id]?.Properties),
    ),
    rules: (functionArns, warnings) => templateRules(template, binding, functionArns, warnings),
  };
}
