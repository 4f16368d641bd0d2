/**
 * A synthesized CloudFormation template as the local stack reads it: its resources, with the
 * intrinsic functions CDK writes (`Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`,
 * `Fn::Split`) resolved against the local stand-ins of its resources, so a policy that names
 * `{"Fn::GetAtt": ["LedgerB7379752", "Arn"]}` names the local table's ARN.
 */
import { readFileSync } from 'node:fs';
import { TemplateError } from './errors.ts';

/** One resource of the template. */
export interface TemplateResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  DependsOn?: unknown;
}

/** The parts of a template the local stack reads. */
export interface CfnTemplate {
  Resources: Record<string, TemplateResource>;
}

/** What a resource is locally: its `Ref` and its attributes (`Arn`, `Name`, ...). */
export interface LocalResource {
  ref: string;
  attributes: Record<string, string>;
}

/** Where the template's resources live locally, and the pseudo parameters. */
export interface LocalBinding {
  region: string;
  account: string;
  stackName: string;
  /** The local stand-in of a resource (by logical id and type); undefined = a made-up ARN for it. */
  resource(logicalId: string, resource: TemplateResource): LocalResource | undefined;
}

/** Reads a template file. */
export function readTemplate(file: string): CfnTemplate {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new TemplateError(`cannot read the template ${file}: ${(cause as Error).message}`, { cause });
  }
  const resources = (parsed as { Resources?: unknown } | null)?.Resources;
  if (!resources || typeof resources !== 'object') throw new TemplateError(`${file} has no Resources`);
  return parsed as CfnTemplate;
}

/** The IAM service prefix of a resource type, for made-up ARNs (`AWS::SNS::Topic` -> `sns`). */
function servicePrefix(type: string): string {
  return (type.split('::')[1] ?? 'resource').toLowerCase();
}

/**
 * Resolves intrinsic functions in a template value against `binding`: every reference to a
 * resource becomes its local name or ARN (a resource the binding does not place gets a
 * made-up ARN of its own, which no local call names).
 *
 * @throws TemplateError for a reference to a resource that is not in the template, or an
 * intrinsic the local stack does not model
 */
export function createResolver(template: CfnTemplate, binding: LocalBinding): (value: unknown) => unknown {
  const { region, account } = binding;
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::Region': region,
    'AWS::AccountId': account,
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': binding.stackName,
    'AWS::StackId': `arn:aws:cloudformation:${region}:${account}:stack/${binding.stackName}/local`,
  };
  const cache = new Map<string, LocalResource>();
  const local = (logicalId: string): LocalResource => {
    const cached = cache.get(logicalId);
    if (cached) return cached;
    const resource = template.Resources[logicalId];
    if (!resource) throw new TemplateError(`the template refers to ${logicalId}, which it does not define`);
    const found = binding.resource(logicalId, resource) ?? {
      ref: logicalId,
      attributes: { Arn: `arn:aws:${servicePrefix(resource.Type)}:${region}:${account}:${logicalId}` },
    };
    cache.set(logicalId, found);
    return found;
  };
  const ref = (name: string): string => pseudo[name] ?? local(name).ref;
  // An attribute the local stack has no stand-in for (an API's endpoint) gets a made-up value
  // of its own, which no local call names.
  const getAtt = (logicalId: string, attribute: string): string =>
    local(logicalId).attributes[attribute] ?? `local:${logicalId}.${attribute}`;

  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1) {
      const [fn, arg] = entries[0] as [string, unknown];
      switch (fn) {
        case 'Ref':
          return ref(String(arg));
        case 'Fn::GetAtt': {
          const [id, attr] = Array.isArray(arg) ? arg : String(arg).split('.');
          return getAtt(String(id), String(attr));
        }
        case 'Fn::Join': {
          const [sep, parts] = arg as [string, unknown[]];
          return (resolve(parts) as unknown[]).map(String).join(sep);
        }
        case 'Fn::Select': {
          const [index, items] = arg as [unknown, unknown];
          return (resolve(items) as unknown[])[Number(resolve(index))];
        }
        case 'Fn::Split': {
          const [sep, text] = arg as [string, unknown];
          return String(resolve(text)).split(sep);
        }
        case 'Fn::Sub': {
          const [text, vars] = Array.isArray(arg)
            ? (arg as [string, Record<string, unknown>])
            : [String(arg), {}];
          const resolvedVars = resolve(vars) as Record<string, unknown>;
          return text.replace(/\$\{([^}!]+)\}/g, (_, name: string) => {
            if (name in resolvedVars) return String(resolvedVars[name]);
            const [id, attr] = name.split('.');
            return attr ? getAtt(id as string, attr) : ref(name);
          });
        }
        default:
          if (fn.startsWith('Fn::')) throw new TemplateError(`the local stack does not model ${fn}`);
      }
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, resolve(v)]));
  };
  return resolve;
}

/** The logical ids of the template's resources of `type`. */
export function resourcesOfType(template: CfnTemplate, type: string): string[] {
  return Object.entries(template.Resources)
    .filter(([, r]) => r.Type === type)
    .map(([id]) => id);
}

/**
 * The logical id of the resource CDK made for construct `constructId` (a child of the stack):
 * by its `aws:cdk:path` metadata when the template has it (`cdk synth` writes it), else by
 * CDK's naming, the construct id and an 8-digit hash (`RunStep6793BE8D`).
 */
export function logicalIdOf(template: CfnTemplate, type: string, constructId: string): string | undefined {
  const candidates = resourcesOfType(template, type);
  const byPath = candidates.find((id) => {
    const path = template.Resources[id]?.Metadata?.['aws:cdk:path'];
    return typeof path === 'string' && path.split('/')[1] === constructId;
  });
  if (byPath) return byPath;
  const pattern = new RegExp(`^${constructId}[0-9A-F]{8}$`);
  return candidates.find((id) => pattern.test(id));
}
