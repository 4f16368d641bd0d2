import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp } from '../../../cdk/belay-app.ts';
import {
  CONTEXT_KEYS,
  DEFAULT_CONFIG,
  parseAnchorBaseUrl,
  parseApiThrottle,
  parseDefaultPlan,
  parseLambdaNode,
  parseLambdaRuntimeVersion,
  parseProvisionedRunSteps,
  readConfig,
} from '../../../cdk/config.ts';
import { parseApplications } from '../../../cdk/config-applications.ts';
import { ConfigError } from '../../../cdk/errors.ts';
import { TestApps } from '../../support/cdk.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

describe('Function: readConfig', () => {
  it('uses retain, one month, no nag, no applications, 50/100 rps the free plan and no agent models when nothing is set', () => {
    expect(readConfig(apps.app())).toEqual({
      removalPolicy: RemovalPolicy.RETAIN,
      logRetention: RetentionDays.ONE_MONTH,
      nag: false,
      applications: {},
      apiThrottle: { rateLimit: 50, burstLimit: 100 },
      defaultPlan: 'free',
      provisionedRunSteps: 0,
      playbookDirs: [],
      agentModels: [],
      checks: [],
      sourceMaps: false,
      mcpAnswerTenants: [],
    });
    expect(DEFAULT_CONFIG.logRetention).toBe(30);
  });

  it.each([
    [CONTEXT_KEYS.removalPolicy, 'retain', { removalPolicy: RemovalPolicy.RETAIN }],
    [CONTEXT_KEYS.removalPolicy, 'destroy', { removalPolicy: RemovalPolicy.DESTROY }],
    [CONTEXT_KEYS.logRetentionDays, 7, { logRetention: RetentionDays.ONE_WEEK }],
    [CONTEXT_KEYS.logRetentionDays, '14', { logRetention: RetentionDays.TWO_WEEKS }],
    [CONTEXT_KEYS.logRetentionDays, 9999, { logRetention: RetentionDays.INFINITE }],
    [CONTEXT_KEYS.nag, true, { nag: true }],
    [CONTEXT_KEYS.nag, 'true', { nag: true }],
    [CONTEXT_KEYS.nag, 'false', { nag: false }],
    [CONTEXT_KEYS.sourceMaps, 'true', { sourceMaps: true }],
    [CONTEXT_KEYS.sourceMaps, false, { sourceMaps: false }],
    [
      CONTEXT_KEYS.applications,
      '{"shop":{"baseUrl":"https://shop.example.com"}}',
      { applications: { shop: { baseUrl: 'https://shop.example.com' } } },
    ],
    [CONTEXT_KEYS.apiRateLimit, '200', { apiThrottle: { rateLimit: 200, burstLimit: 200 } }],
    [CONTEXT_KEYS.apiBurstLimit, 500, { apiThrottle: { rateLimit: 50, burstLimit: 500 } }],
    [
      CONTEXT_KEYS.anchorBaseUrl,
      'https://api.anchor.example/',
      { anchorBaseUrl: 'https://api.anchor.example' },
    ],
    [CONTEXT_KEYS.defaultPlan, 'starter', { defaultPlan: 'starter' }],
    [CONTEXT_KEYS.mcpAnswerTenants, 'acme, globex,acme', { mcpAnswerTenants: ['acme', 'globex'] }],
    [CONTEXT_KEYS.mcpAnswerTenants, ['acme'], { mcpAnswerTenants: ['acme'] }],
  ])('reads %s = %j', (key, value, expected) => {
    expect(readConfig(apps.app({ [key]: value }))).toMatchObject(expected);
  });

  it.each([
    [CONTEXT_KEYS.removalPolicy, 'keep', /'belay:removalPolicy' must be 'retain' or 'destroy'; got "keep"/],
    [
      CONTEXT_KEYS.removalPolicy,
      'RETAIN',
      /'belay:removalPolicy' must be 'retain' or 'destroy'; got "RETAIN"/,
    ],
    [
      CONTEXT_KEYS.logRetentionDays,
      '31',
      /'belay:logRetentionDays' must be a CloudWatch Logs retention .*got "31"/,
    ],
    [CONTEXT_KEYS.logRetentionDays, 'a month', /'belay:logRetentionDays' must be .*1, 3, 5, 7, 14, 30/],
    [CONTEXT_KEYS.nag, 'yes', /'belay:nag' must be 'true' or 'false'; got "yes"/],
    [CONTEXT_KEYS.sourceMaps, 'on', /'belay:sourceMaps' must be 'true' or 'false'; got "on"/],
    [CONTEXT_KEYS.applications, '{shop:', /'belay:applications' must be an object .* \(as JSON\)/],
    [CONTEXT_KEYS.apiRateLimit, '0', /'belay:apiRateLimit' must be a whole number from 1 to 1000000/],
    [CONTEXT_KEYS.apiBurstLimit, 'lots', /'belay:apiBurstLimit' must be a whole number/],
    [CONTEXT_KEYS.anchorBaseUrl, 'http://api.anchor.example', /'belay:anchorBaseUrl' must be an https URL/],
    [
      CONTEXT_KEYS.defaultPlan,
      'platinum',
      /'belay:defaultPlan' must be 'free', 'starter', 'growth' or 'enterprise'/,
    ],
    [CONTEXT_KEYS.mcpAnswerTenants, 'acme;globex', /'belay:mcpAnswerTenants' must be tenant ids/],
    [CONTEXT_KEYS.mcpAnswerTenants, [42], /'belay:mcpAnswerTenants' must be tenant ids/],
  ])('refuses %s = %j with a message naming the key and the accepted values', (key, value, message) => {
    const read = (): unknown => readConfig(apps.app({ [key]: value }));
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(message);
  });

  it('fails the app with the message before any stack is built', () => {
    const app = apps.app({ [CONTEXT_KEYS.removalPolicy]: 'keep' });
    expect(() => configureApp(app)).toThrow(/Context 'belay:removalPolicy' must be 'retain' or 'destroy'/);
    expect(app.node.children).toHaveLength(0);
  });
});

describe('Function: parseApplications', () => {
  const key = CONTEXT_KEYS.applications;

  it('takes an object or its JSON, and nothing as none', () => {
    const apps = {
      shop: {
        baseUrl: 'https://shop.example.com/app',
        allowedDomains: ['*.cdn.example.com', 'x.example.com:8443'],
      },
      'crm-2': { baseUrl: 'https://crm.example.com' },
    };
    expect(parseApplications(key, apps)).toEqual(apps);
    expect(parseApplications(key, JSON.stringify(apps))).toEqual(apps);
    expect(parseApplications(key, undefined)).toEqual({});
  });

  it.each([
    [[], /must be an object of application name/],
    ['null', /must be an object of application name/],
    [{ Shop: { baseUrl: 'https://a.example' } }, /application 'Shop': names are lower-case/],
    [{ shop: 'https://a.example' }, /application 'shop': must be an object/],
    [{ shop: {} }, /application 'shop': baseUrl must be an https URL/],
    [{ shop: { baseUrl: 'http://a.example' } }, /baseUrl must be an https URL/],
    [{ shop: { baseUrl: 'https://u:p@a.example' } }, /without credentials/],
    [{ shop: { baseUrl: 'https://a.example', allowed: [] } }, /unknown field\(s\) allowed/],
    [{ shop: { baseUrl: 'https://a.example', allowedDomains: 'b.example' } }, /must be an array/],
    [{ shop: { baseUrl: 'https://a.example', allowedDomains: ['https://b.example'] } }, /is not a hostname/],
    [{ shop: { baseUrl: 'https://a.example', allowedDomains: ['*'] } }, /is not a hostname/],
  ])('refuses %j', (value, message) => {
    const parse = (): unknown => parseApplications(key, value);
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(message);
  });
});

describe('Function: parseApiThrottle, parseAnchorBaseUrl, parseDefaultPlan', () => {
  it('keeps the burst at least the rate', () => {
    expect(parseApiThrottle(undefined, undefined)).toEqual({ rateLimit: 50, burstLimit: 100 });
    expect(parseApiThrottle(10, 10)).toEqual({ rateLimit: 10, burstLimit: 10 });
    expect(() => parseApiThrottle(10, 5)).toThrow(
      /'belay:apiBurstLimit' must be at least the rate limit \(10\)/,
    );
  });

  it('accepts https base URLs without credentials only, and known plans only', () => {
    expect(parseAnchorBaseUrl(undefined)).toBeUndefined();
    expect(() => parseAnchorBaseUrl('https://k:s@api.example')).toThrow(ConfigError);
    expect(() => parseAnchorBaseUrl(42)).toThrow(ConfigError);
    expect(parseDefaultPlan('enterprise')).toBe('enterprise');
    expect(() => parseDefaultPlan(5)).toThrow(ConfigError);
  });

  it('takes 0-1000 provisioned RunSteps, as a number or a numeric string', () => {
    expect(parseProvisionedRunSteps(undefined)).toBe(0);
    expect(parseProvisionedRunSteps('2')).toBe(2);
    expect(parseProvisionedRunSteps(0)).toBe(0);
    for (const bad of [-1, 1001, 1.5, 'two', '', true]) {
      expect(() => parseProvisionedRunSteps(bad), String(bad)).toThrow(
        /'belay:provisionedRunSteps' must be a whole number from 0 to 1000/,
      );
    }
  });
});

describe('Function: parseLambdaNode, parseLambdaRuntimeVersion', () => {
  it('takes an existing binary (made absolute) and a runtime version ARN; nothing by default', () => {
    expect(parseLambdaNode(undefined)).toBeUndefined();
    expect(parseLambdaNode(process.execPath)).toBe(process.execPath);
    expect(parseLambdaRuntimeVersion(undefined)).toBeUndefined();
    const arn = 'arn:aws:lambda:us-east-1::runtime:a1b2c3d4e5f6';
    expect(parseLambdaRuntimeVersion(arn)).toBe(arn);
  });

  it.each([
    [() => parseLambdaNode('/no/such/node'), 'belay:lambdaNode'],
    [() => parseLambdaNode(''), 'belay:lambdaNode'],
    [() => parseLambdaRuntimeVersion('nodejs22.x'), 'belay:lambdaRuntimeVersion'],
    [
      () => parseLambdaRuntimeVersion('arn:aws:lambda:us-east-1:123456789012:function:x'),
      'belay:lambdaRuntimeVersion',
    ],
  ])('refuses what cannot be the runtime (%#), naming the key', (parse, key) => {
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(key);
  });
});
