import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp } from '../../../cdk/belay-app.ts';
import { BelayFunction } from '../../../cdk/constructs/belay-function.ts';
import { type ApiRouteSpec, JobApi } from '../../../cdk/constructs/job-api.ts';
import { BindingError } from '../../../cdk/errors.ts';
import { ROUTES } from '../../../lambdas/lib/api/routes.ts';
import { cdkJsonContext, fixture, TestApps } from '../../support/cdk.ts';
import { logicalId } from '../../support/cdk-template.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

/** The API's routes, as the stack must serve them. */
const REQUIRED = [
  'POST /jobs',
  'GET /jobs',
  'GET /jobs/{jobId}',
  'GET /jobs/{jobId}/ledger',
  'POST /jobs/{jobId}/decisions',
  'POST /jobs/{jobId}/mfa',
  'POST /jobs/{jobId}/cancel',
  'POST /jobs/{jobId}/answers',
  'POST /mcp',
  'POST /webhooks/anchor',
  'GET /openapi.json',
];
/**
 * Anchor's webhook, the OpenAPI document, the hosted sign-in's callback (its key is the
 * credential) and the console's routes (they authenticate the session cookie themselves).
 */
const OPEN = [
  'GET /openapi.json',
  'POST /webhooks/anchor',
  'GET /accounts/connect/callback/{callbackKey}',
  ...ROUTES.filter((r) => r.path === '/console' || r.path.startsWith('/console/')).map(
    (r) => `${r.method} ${r.path}`,
  ),
].sort();

describe('Construct: JobApi in the Belay stack', () => {
  const stack = configureApp(apps.app(cdkJsonContext()), {});
  const template = Template.fromStack(stack);
  const authorizerId = logicalId(
    stack,
    stack.api.node.findChild('HttpApi').node.findChild('ApiKeyAuthorizer'),
  );
  const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
    (r) => r.Properties as Record<string, unknown>,
  );

  it('has one route per entry of the API route table, including every required one', () => {
    const keys = routes.map((r) => r.RouteKey as string).sort();
    expect(keys).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    for (const key of REQUIRED) expect(keys).toContain(key);
  });

  it('puts the Lambda authorizer on every route except the webhook, the OpenAPI document, the connect callback and the console', () => {
    const open = routes.filter((r) => r.AuthorizationType === 'NONE').map((r) => r.RouteKey);
    expect(open.sort()).toEqual(OPEN);
    for (const route of routes.filter((r) => !OPEN.includes(r.RouteKey as string))) {
      expect(route, route.RouteKey as string).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
      });
    }
  });

  it('sends every route to the one API handler through one integration', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Integration', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
      IntegrationUri: { 'Fn::GetAtt': [logicalId(stack, stack.apiHandler), 'Arn'] },
    });
  });

  it('authorizes with simple responses from the Authorization header, without caching', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'REQUEST',
      EnableSimpleResponses: true,
      AuthorizerPayloadFormatVersion: '2.0',
      IdentitySource: ['$request.header.Authorization'],
      AuthorizerResultTtlInSeconds: 0,
    });
    const uri = JSON.stringify(
      template.findResources('AWS::ApiGatewayV2::Authorizer')[authorizerId]?.Properties.AuthorizerUri,
    );
    expect(uri).toContain(logicalId(stack, stack.apiAuthorizer));
  });

  it('throttles the $default stage with the default rate and burst', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
  });

  it('writes JSON access logs (request id, ip, route, status, latency) without any header', () => {
    const [stage] = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
    const settings = stage?.Properties.AccessLogSettings as { DestinationArn: unknown; Format: string };
    expect(settings.DestinationArn).toEqual({
      'Fn::GetAtt': [logicalId(stack, stack.api.accessLogs), 'Arn'],
    });
    const format = JSON.parse(settings.Format) as Record<string, string>;
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      routeKey: '$context.routeKey',
      status: '$context.status',
      latency: '$context.responseLatency',
    });
    expect(settings.Format.toLowerCase()).not.toMatch(/header|authorization/);
  });

  it('has no CORS configuration', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    const [api] = Object.values(template.findResources('AWS::ApiGatewayV2::Api'));
    expect(api?.Properties.CorsConfiguration).toBeUndefined();
  });
});

describe('Construct: JobApi', () => {
  function build(routes: ApiRouteSpec[]): Stack {
    const stack = new Stack(apps.app(), 'ApiTest');
    const fn = (id: string): BelayFunction =>
      new BelayFunction(stack, id, { entry: fixture('plain-handler.ts'), timeout: Duration.seconds(5) });
    new JobApi(stack, 'Api', {
      handler: fn('Handler'),
      authorizer: fn('Authorizer'),
      routes,
      throttle: { rateLimit: 1, burstLimit: 2 },
    });
    return stack;
  }

  it('builds a route per spec, open only where declared', () => {
    const template = Template.fromStack(
      build([
        { method: 'get', path: '/a', auth: true },
        { method: 'DELETE', path: '/a/{id}', auth: true },
        { method: 'GET', path: '/openapi.json', auth: false },
      ]),
    );
    template.resourceCountIs('AWS::ApiGatewayV2::Route', 3);
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'DELETE /a/{id}',
      AuthorizationType: 'CUSTOM',
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'GET /openapi.json',
      AuthorizationType: 'NONE',
    });
  });

  it.each([
    [
      [{ method: 'GET', path: '/secret', auth: false }],
      /GET \/secret has no authorizer and no reason to be open/,
    ],
    [
      [
        { method: 'GET', path: '/a', auth: true },
        { method: 'get', path: '/a', auth: true },
      ],
      /route GET \/a is listed twice/,
    ],
    [[{ method: 'FETCH', path: '/a', auth: true }], /unknown HTTP method 'FETCH'/],
    [[{ method: 'ANY', path: '/a', auth: true }], /unknown HTTP method 'ANY'/],
  ])('refuses %j', (routes, message) => {
    const run = (): unknown => build(routes);
    expect(run).toThrow(BindingError);
    expect(run).toThrow(message);
  });
});
