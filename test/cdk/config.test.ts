import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp } from '../../cdk/belay-app.ts';
import { CONTEXT_KEYS, DEFAULT_CONFIG, readConfig } from '../../cdk/config.ts';
import { ConfigError } from '../../cdk/errors.ts';
import { TestApps } from './support.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

describe('Function: readConfig', () => {
  it('uses retain, one month and no nag when nothing is set', () => {
    expect(readConfig(apps.app())).toEqual({
      removalPolicy: RemovalPolicy.RETAIN,
      logRetention: RetentionDays.ONE_MONTH,
      nag: false,
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
