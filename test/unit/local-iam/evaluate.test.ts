import { describe, expect, it } from 'vitest';
import { UnsupportedConditionError } from '../../../local/iam/errors.ts';
import { evaluate, type PolicyStatement, wildcardMatch } from '../../../local/iam/evaluate.ts';

const TABLE = 'arn:aws:dynamodb:us-east-1:000000000000:table/belay-local';

describe('Function: wildcardMatch', () => {
  it.each([
    ['dynamodb:*', 'dynamodb:GetItem', true],
    ['dynamodb:Get?tem', 'dynamodb:GetItem', true],
    ['dynamodb:Get', 'dynamodb:GetItem', false],
    [`${TABLE}/index/*`, `${TABLE}/index/gsi1`, true],
    [`${TABLE}/index/*`, TABLE, false],
    [
      'arn:aws:secretsmanager:*:*:secret:belay/*',
      'arn:aws:secretsmanager:us-east-1:0:secret:belay/a/b-x',
      true,
    ],
    ['T#*#CAP', 'T#acme#CAP', true],
    ['T#*#CAP', 'T#acme#J#1', false],
    ['a.b', 'axb', false],
  ])('%s ~ %s is %s', (pattern, value, expected) => {
    expect(wildcardMatch(pattern, value)).toBe(expected);
  });
});

describe('Function: evaluate', () => {
  const allowTable: PolicyStatement = {
    Effect: 'Allow',
    Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
    Resource: [TABLE, `${TABLE}/index/*`],
  };

  it('allows what a statement names and nothing else (the implicit deny)', () => {
    expect(evaluate([allowTable], { action: 'dynamodb:GetItem', resource: TABLE }).allowed).toBe(true);
    expect(evaluate([allowTable], { action: 'dynamodb:getitem', resource: TABLE }).allowed).toBe(true);
    expect(evaluate([allowTable], { action: 'dynamodb:UpdateItem', resource: TABLE })).toEqual({
      allowed: false,
      explicitDeny: false,
    });
    expect(evaluate([allowTable], { action: 'dynamodb:GetItem', resource: `${TABLE}-other` }).allowed).toBe(
      false,
    );
  });

  it('lets an explicit Deny win over any Allow', () => {
    const deny: PolicyStatement = { Effect: 'Deny', Action: 'dynamodb:*', Resource: '*' };
    expect(evaluate([allowTable, deny], { action: 'dynamodb:GetItem', resource: TABLE })).toMatchObject({
      allowed: false,
      explicitDeny: true,
    });
  });

  it('honours NotAction and NotResource', () => {
    const notAction: PolicyStatement = { Effect: 'Allow', NotAction: 'dynamodb:DeleteItem', Resource: '*' };
    expect(evaluate([notAction], { action: 'dynamodb:GetItem', resource: TABLE }).allowed).toBe(true);
    expect(evaluate([notAction], { action: 'dynamodb:DeleteItem', resource: TABLE }).allowed).toBe(false);
    const notResource: PolicyStatement = { Effect: 'Allow', Action: '*', NotResource: `${TABLE}/index/*` };
    expect(
      evaluate([notResource], { action: 'dynamodb:Query', resource: `${TABLE}/index/gsi1` }).allowed,
    ).toBe(false);
  });

  describe('dynamodb:LeadingKeys, as bindTable writes it', () => {
    const leases: PolicyStatement = {
      Effect: 'Allow',
      Action: 'dynamodb:DeleteItem',
      Resource: TABLE,
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*#CAP'] } },
    };
    it('allows a delete of a lease and refuses one of a job', () => {
      const del = (pk: string) =>
        evaluate([leases], {
          action: 'dynamodb:DeleteItem',
          resource: TABLE,
          context: { 'dynamodb:LeadingKeys': [pk] },
        }).allowed;
      expect(del('T#acme#CAP')).toBe(true);
      expect(del('T#acme#J#job-1')).toBe(false);
    });
    it('holds for every key of a batch: one foreign key refuses it', () => {
      expect(
        evaluate([leases], {
          action: 'dynamodb:DeleteItem',
          resource: TABLE,
          context: { 'dynamodb:LeadingKeys': ['T#a#CAP', 'T#a#J#1'] },
        }).allowed,
      ).toBe(false);
    });
    it('is true over no keys at all, as IAM evaluates ForAllValues', () => {
      expect(evaluate([leases], { action: 'dynamodb:DeleteItem', resource: TABLE }).allowed).toBe(true);
    });
  });

  it('evaluates StringEquals, IfExists and Null as IAM does', () => {
    const s = (Condition: PolicyStatement['Condition']): PolicyStatement => ({
      Effect: 'Allow',
      Action: '*',
      Resource: '*',
      Condition,
    });
    const req = (context?: Record<string, string[]>) => ({
      action: 'x:Y',
      resource: '*',
      ...(context ? { context } : {}),
    });
    expect(evaluate([s({ StringEquals: { 'aws:k': 'v' } })], req({ 'aws:k': ['v'] })).allowed).toBe(true);
    expect(evaluate([s({ StringEquals: { 'aws:k': 'v' } })], req()).allowed).toBe(false);
    expect(evaluate([s({ StringEqualsIfExists: { 'aws:k': 'v' } })], req()).allowed).toBe(true);
    expect(evaluate([s({ StringNotEquals: { 'aws:k': 'v' } })], req({ 'aws:k': ['w'] })).allowed).toBe(true);
    expect(evaluate([s({ Null: { 'aws:k': 'true' } })], req()).allowed).toBe(true);
    expect(evaluate([s({ Null: { 'aws:k': 'true' } })], req({ 'aws:k': ['v'] })).allowed).toBe(false);
  });

  it('refuses to guess at an operator it does not model', () => {
    const dated: PolicyStatement = {
      Effect: 'Allow',
      Action: '*',
      Resource: '*',
      Condition: { DateLessThan: { 'aws:CurrentTime': '2030-01-01T00:00:00Z' } },
    };
    expect(() => evaluate([dated], { action: 'x:Y', resource: '*' })).toThrow(UnsupportedConditionError);
  });
});
