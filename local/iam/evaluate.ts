/**
 * IAM's evaluation of identity-based policies, for the local stack: one request (an action on
 * a resource, with its condition keys) against a function's policy statements. An explicit
 * Deny wins, else an Allow that matches action, resource and conditions, else the implicit
 * deny. Only what identity policies use is modelled (no resource policies, boundaries or SCPs:
 * a Lambda role in one account has none that could widen it).
 */
import { UnsupportedConditionError } from './errors.ts';

/** A statement as CloudFormation holds it, with every intrinsic already resolved to text. */
export interface PolicyStatement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  /** `{ "<operator>": { "<key>": value | values } }`. */
  Condition?: Record<string, Record<string, unknown>>;
}

/** What a call asks IAM for: one action on one resource, with the request's condition keys. */
export interface IamRequest {
  /** `dynamodb:UpdateItem`. */
  action: string;
  /** The resource ARN (`*` for actions without one). */
  resource: string;
  /** Condition keys of the request (`dynamodb:LeadingKeys` -> the partition key values). */
  context?: Record<string, string[]>;
}

/** IAM's answer. */
export type Decision =
  | { allowed: true; statement: PolicyStatement }
  | { allowed: false; explicitDeny: boolean; statement?: PolicyStatement };

const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : [v].flat());

/** IAM wildcards: `*` any run of characters, `?` any one; everything else literal. */
export function wildcardMatch(pattern: string, value: string, ignoreCase = false): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
}

/** Action names are case-insensitive (`dynamodb:getitem` is `dynamodb:GetItem`). */
function matchesAction(statement: PolicyStatement, action: string): boolean {
  if (statement.Action !== undefined)
    return list(statement.Action).some((p) => wildcardMatch(p, action, true));
  if (statement.NotAction !== undefined)
    return !list(statement.NotAction).some((p) => wildcardMatch(p, action, true));
  return false;
}

/** Resource ARNs are case-sensitive. */
function matchesResource(statement: PolicyStatement, resource: string): boolean {
  if (statement.Resource !== undefined)
    return list(statement.Resource).some((p) => wildcardMatch(p, resource));
  if (statement.NotResource !== undefined)
    return !list(statement.NotResource).some((p) => wildcardMatch(p, resource));
  return false;
}

type ValueTest = (policyValue: string, requestValue: string) => boolean;

/** The operators identity policies use; `negated` ones hold when no policy value matches. */
const OPERATORS: Record<string, { test: ValueTest; negated?: boolean }> = {
  StringEquals: { test: (p, v) => p === v },
  StringNotEquals: { test: (p, v) => p === v, negated: true },
  StringEqualsIgnoreCase: { test: (p, v) => p.toLowerCase() === v.toLowerCase() },
  StringNotEqualsIgnoreCase: { test: (p, v) => p.toLowerCase() === v.toLowerCase(), negated: true },
  StringLike: { test: (p, v) => wildcardMatch(p, v) },
  StringNotLike: { test: (p, v) => wildcardMatch(p, v), negated: true },
  ArnEquals: { test: (p, v) => p === v },
  ArnNotEquals: { test: (p, v) => p === v, negated: true },
  ArnLike: { test: (p, v) => wildcardMatch(p, v) },
  ArnNotLike: { test: (p, v) => wildcardMatch(p, v), negated: true },
  Bool: { test: (p, v) => p.toLowerCase() === v.toLowerCase() },
  NumericEquals: { test: (p, v) => Number(p) === Number(v) },
  NumericNotEquals: { test: (p, v) => Number(p) === Number(v), negated: true },
  NumericLessThan: { test: (p, v) => Number(v) < Number(p) },
  NumericLessThanEquals: { test: (p, v) => Number(v) <= Number(p) },
  NumericGreaterThan: { test: (p, v) => Number(v) > Number(p) },
  NumericGreaterThanEquals: { test: (p, v) => Number(v) >= Number(p) },
};

/** One `"<operator>": { key: values }` block against the request's keys (keys are case-insensitive). */
function conditionHolds(
  rawOperator: string,
  block: Record<string, unknown>,
  context: Record<string, string[]>,
): boolean {
  let operator = rawOperator;
  let qualifier: 'ForAllValues' | 'ForAnyValue' | undefined;
  const q = /^(ForAllValues|ForAnyValue):(.+)$/.exec(operator);
  if (q) {
    qualifier = q[1] as 'ForAllValues' | 'ForAnyValue';
    operator = q[2] as string;
  }
  const ifExists = operator.endsWith('IfExists');
  if (ifExists) operator = operator.slice(0, -'IfExists'.length);
  const keys = Object.fromEntries(Object.entries(context).map(([k, v]) => [k.toLowerCase(), v]));
  for (const [key, raw] of Object.entries(block)) {
    const policyValues = [raw].flat().map((v) => String(v));
    const present = keys[key.toLowerCase()];
    if (operator === 'Null') {
      const isNull = present === undefined || present.length === 0;
      if (!policyValues.some((p) => (p.toLowerCase() === 'true') === isNull)) return false;
      continue;
    }
    const op = OPERATORS[operator];
    if (!op) throw new UnsupportedConditionError(rawOperator);
    const valueHolds = (v: string): boolean => {
      const any = policyValues.some((p) => op.test(p, v));
      return op.negated ? !any : any;
    };
    if (present === undefined || present.length === 0) {
      // IAM: ForAllValues over no values is true; a missing key fails everything else but IfExists.
      if (qualifier === 'ForAllValues' || ifExists) continue;
      return false;
    }
    const holds = qualifier === 'ForAllValues' ? present.every(valueHolds) : present.some(valueHolds);
    if (!holds) return false;
  }
  return true;
}

function conditionsHold(statement: PolicyStatement, context: Record<string, string[]>): boolean {
  return Object.entries(statement.Condition ?? {}).every(([op, block]) => conditionHolds(op, block, context));
}

function applies(statement: PolicyStatement, request: IamRequest): boolean {
  return (
    matchesAction(statement, request.action) &&
    matchesResource(statement, request.resource) &&
    conditionsHold(statement, request.context ?? {})
  );
}

/**
 * IAM's decision for one request under a set of identity-policy statements.
 *
 * @example
 * evaluate([{ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: tableArn }],
 *   { action: 'dynamodb:UpdateItem', resource: tableArn }); // { allowed: false, explicitDeny: false }
 */
export function evaluate(statements: readonly PolicyStatement[], request: IamRequest): Decision {
  const deny = statements.find((s) => s.Effect === 'Deny' && applies(s, request));
  if (deny) return { allowed: false, explicitDeny: true, statement: deny };
  const allow = statements.find((s) => s.Effect === 'Allow' && applies(s, request));
  return allow ? { allowed: true, statement: allow } : { allowed: false, explicitDeny: false };
}
