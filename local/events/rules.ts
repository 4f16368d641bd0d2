/**
 * The template's EventBridge rules, on the local bus: each `AWS::Events::Rule` with its event
 * pattern or schedule, on its bus, with its Lambda targets mapped to the local runner's
 * functions. As in AWS, a rule may only invoke a function whose resource policy lets
 * `events.amazonaws.com` invoke it for that rule (the `AWS::Lambda::Permission` CDK adds): a
 * target without one is not delivered to, and says so.
 */
import { type CfnTemplate, createResolver, type LocalBinding, resourcesOfType } from '../iam/template.ts';
import type { LocalRule, RuleTarget } from './bus.ts';

/** `rate(5 minutes)` in ms; undefined for a cron expression (not run locally). */
export function rateMs(expression: string): number | undefined {
  const m = /^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$/.exec(expression.trim());
  if (!m) return undefined;
  const unit = m[2]?.startsWith('minute') ? 60_000 : m[2]?.startsWith('hour') ? 3_600_000 : 86_400_000;
  return Number(m[1]) * unit;
}

interface Permission {
  functionArn: string;
  principal: string;
  sourceArn?: string;
}

/**
 * The rules of `template`, with their Lambda targets among `functionArns` (the functions the
 * local runner runs); other targets are left out, with a line in `warnings`.
 */
export function templateRules(
  template: CfnTemplate,
  binding: LocalBinding,
  functionArns: ReadonlySet<string>,
  warnings: string[] = [],
): LocalRule[] {
  const resolve = createResolver(template, binding);
  const arnOf = (fn: string): string =>
    fn.startsWith('arn:') ? fn : `arn:aws:lambda:${binding.region}:${binding.account}:function:${fn}`;
  const permissions: Permission[] = resourcesOfType(template, 'AWS::Lambda::Permission').map((id) => {
    const p = resolve(template.Resources[id]?.Properties ?? {}) as Record<string, string>;
    return {
      functionArn: arnOf(String(p.FunctionName)),
      principal: String(p.Principal),
      ...(p.SourceArn ? { sourceArn: String(p.SourceArn) } : {}),
    };
  });
  const rules: LocalRule[] = [];
  for (const id of resourcesOfType(template, 'AWS::Events::Rule')) {
    const props = resolve(template.Resources[id]?.Properties ?? {}) as Record<string, unknown>;
    const ruleArn = String(resolve({ 'Fn::GetAtt': [id, 'Arn'] }));
    const name = typeof props.Name === 'string' ? props.Name : id;
    const pattern =
      typeof props.EventPattern === 'string'
        ? (JSON.parse(props.EventPattern) as Record<string, unknown>)
        : (props.EventPattern as Record<string, unknown> | undefined);
    const schedule = typeof props.ScheduleExpression === 'string' ? props.ScheduleExpression : undefined;
    const everyMs = schedule ? rateMs(schedule) : undefined;
    if (schedule && everyMs === undefined)
      warnings.push(`rule ${name}: schedule ${schedule} is not run locally`);
    const targets: RuleTarget[] = [];
    for (const t of (props.Targets as { Arn: string; Id: string; Input?: string }[] | undefined) ?? []) {
      if (!functionArns.has(t.Arn)) {
        warnings.push(`rule ${name}: target ${t.Id} (${t.Arn}) is not a local function; not delivered`);
        continue;
      }
      const allowed = permissions.some(
        (p) =>
          p.functionArn === t.Arn &&
          p.principal === 'events.amazonaws.com' &&
          (p.sourceArn === undefined || p.sourceArn === ruleArn),
      );
      if (!allowed) {
        warnings.push(
          `rule ${name}: EventBridge may not invoke ${t.Arn} (no Lambda permission for the rule)`,
        );
        continue;
      }
      targets.push({ kind: 'lambda', id: t.Id, functionArn: t.Arn, ...(t.Input ? { input: t.Input } : {}) });
    }
    const bus =
      typeof props.EventBusName === 'string' ? (props.EventBusName.split('/').pop() as string) : 'default';
    rules.push({
      name,
      eventBusName: bus,
      ...(pattern ? { pattern } : {}),
      ...(everyMs ? { everyMs } : {}),
      enabled: props.State === undefined || props.State === 'ENABLED',
      targets,
    });
  }
  return rules;
}
