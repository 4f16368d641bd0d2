/**
 * The HTTP API: API Gateway (HTTP API, payload 2.0) in front of one Lambda function that
 * serves every route, with a Lambda authorizer on every route that needs a key.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  type HttpRoute,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BindingError } from '../errors.ts';

/** One route: what the API's route table (`ROUTES` in `lambdas/lib/api/routes.ts`) says of it. */
export interface ApiRouteSpec {
  /** HTTP method, e.g. `POST`. */
  readonly method: string;
  /** API Gateway path, e.g. `/jobs/{jobId}`. */
  readonly path: string;
  /** Needs `Authorization: Bearer <api key>`; false only for routes that verify callers themselves. */
  readonly auth: boolean;
}

/** Props of {@link JobApi}. */
export interface JobApiProps {
  /** The function that serves every route. */
  readonly handler: IFunction;
  /** The Lambda authorizer (simple responses, `Authorization` header as identity source). */
  readonly authorizer: IFunction;
  /** The routes; an open one (`auth: false`) is served without the authorizer. */
  readonly routes: readonly ApiRouteSpec[];
  /** Default stage throttling, for all callers together (per-key limits are the handler's). */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /**
   * Retention of the access log group.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Removal policy of the access log group.
   * @default RemovalPolicy.RETAIN
   */
  readonly logRemovalPolicy?: RemovalPolicy;
}

/**
 * One JSON line per request: who (source IP, tenant and key id from the authorizer), what
 * (route key), outcome (status, latencies, errors). Never a header: `Authorization` carries the key.
 */
export const ACCESS_LOG_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  latency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
  authorizerError: '$context.authorizer.error',
  tenantId: '$context.authorizer.tenantId',
  keyId: '$context.authorizer.keyId',
});

/**
 * The HTTP API with:
 * - the authorizer as the API's default, so every route has it unless it is declared open;
 *   its results are not cached (a revoked key stops working on the next request);
 * - one integration (and one invoke permission) for the handler, shared by all routes;
 * - a `$default` stage with throttling and JSON access logs; no CORS (browsers are not clients).
 *
 * A Standard state machine cannot be started by API Gateway's Step Functions integration
 * (EXPRESS only), so the handler starts executions itself.
 *
 * @example
 * const api = new JobApi(this, 'Api', { handler, authorizer, routes: ROUTES, throttle: { rateLimit: 50, burstLimit: 100 } });
 * new CfnOutput(this, 'ApiUrl', { value: api.url });
 */
export class JobApi extends Construct {
  /** The API. */
  readonly httpApi: HttpApi;
  /** The `$default` stage. */
  readonly stage: HttpStage;
  /** Where the access logs go. */
  readonly accessLogs: LogGroup;
  /** The routes, by route key (`POST /jobs`). */
  readonly routes: ReadonlyMap<string, HttpRoute>;
  /** The API's base URL, without a trailing slash (`https://<id>.execute-api.<region>.amazonaws.com`). */
  readonly url: string;

  constructor(scope: Construct, id: string, props: JobApiProps) {
    super(scope, id);
    const authorizer = new HttpLambdaAuthorizer('ApiKeyAuthorizer', props.authorizer, {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      identitySource: ['$request.header.Authorization'],
      resultsCacheTtl: Duration.seconds(0),
    });
    this.httpApi = new HttpApi(this, 'HttpApi', {
      description: 'Belay: submit jobs, follow them, decide on waits, connect accounts.',
      defaultAuthorizer: authorizer,
      createDefaultStage: false,
    });
    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.throttle.rateLimit, burstLimit: props.throttle.burstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    this.url = this.httpApi.apiEndpoint;

    const integration = new HttpLambdaIntegration('Handler', props.handler);
    const open = new HttpNoneAuthorizer();
    const routes = new Map<string, HttpRoute>();
    for (const spec of props.routes) {
      const method = httpMethod(this, spec.method);
      const key = `${method} ${spec.path}`;
      if (routes.has(key)) throw new BindingError(this.node.path, `route ${key} is listed twice`);
      const openBecause = spec.auth ? undefined : OPEN_ROUTE_REASONS[key];
      if (!spec.auth && !openBecause) {
        throw new BindingError(
          this.node.path,
          `route ${key} has no authorizer and no reason to be open; add one to OPEN_ROUTE_REASONS`,
        );
      }
      const [route] = this.httpApi.addRoutes({
        path: spec.path,
        methods: [method],
        integration,
        ...(spec.auth ? {} : { authorizer: open }),
      });
      if (!route) throw new BindingError(this.node.path, `route ${key} was not created`);
      if (openBecause) {
        Validations.of(route).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: `${key} is open: ${openBecause}`,
        });
      }
      routes.set(key, route);
    }
    this.routes = routes;
  }
}

const CONSOLE_SELF_AUTH =
  'a console route: a browser sends the session cookie, not a bearer key, so the handler authenticates the cookie itself (an httpOnly, SameSite=Strict session exchanged for an API key, re-checked against the key on every request, rate limited per key; actions also need the page CSRF token and the same role as the API route).';

/** The console's routes (`lambdas/lib/api/console/`): open at API Gateway, authenticated by the handler. */
const CONSOLE_OPEN_ROUTES: Readonly<Record<string, string>> = {
  'GET /console': `${CONSOLE_SELF_AUTH} It only redirects.`,
  'GET /console/sign-in': 'the console sign-in form: static, holds no tenant data.',
  'POST /console/sign-in':
    'exchanges an API key (checked like the authorizer checks it) for a console session; same-origin only, rate limited per source IP.',
  'POST /console/sign-out': `${CONSOLE_SELF_AUTH} Ends the session.`,
  'GET /console/assets/console.js': "the console's script: static, holds no tenant data.",
  'GET /console/assets/console.css': "the console's style sheet: static, holds no tenant data.",
  'GET /console/jobs': CONSOLE_SELF_AUTH,
  'GET /console/jobs/{jobId}': CONSOLE_SELF_AUTH,
  'GET /console/jobs/{jobId}/screenshots/{name}': CONSOLE_SELF_AUTH,
  'GET /console/inbox': CONSOLE_SELF_AUTH,
  'POST /console/api/jobs/{jobId}/decisions': CONSOLE_SELF_AUTH,
  'POST /console/api/jobs/{jobId}/mfa': CONSOLE_SELF_AUTH,
  'POST /console/api/jobs/{jobId}/takeover': CONSOLE_SELF_AUTH,
  'POST /console/api/jobs/{jobId}/cancel': CONSOLE_SELF_AUTH,
  'GET /console/accounts': CONSOLE_SELF_AUTH,
  'GET /console/playbooks/{playbookId}': CONSOLE_SELF_AUTH,
  'POST /console/api/accounts/connect': CONSOLE_SELF_AUTH,
};

/** Why each route without the authorizer is open; a route not listed here must have the authorizer. */
export const OPEN_ROUTE_REASONS: Readonly<Record<string, string>> = {
  'POST /webhooks/anchor':
    "Anchor's webhooks carry no API key; the handler accepts a delivery only with a valid HMAC-SHA256 " +
    'signature and a fresh timestamp, and refuses replays.',
  'GET /openapi.json': 'the OpenAPI document describes the API and holds no tenant data.',
  'GET /accounts/connect/callback/{callbackKey}':
    "Anchor's hosted sign-in sends the person's browser back here, with no API key; the 256-bit callback " +
    'key in the path is the credential (stored only as its SHA-256), single use, bound to the tenant that ' +
    'started the connection and void once its token expires.',
  ...CONSOLE_OPEN_ROUTES,
};

function httpMethod(scope: Construct, method: string): HttpMethod {
  const upper = method.toUpperCase();
  const known = Object.values(HttpMethod).filter((m) => m !== HttpMethod.ANY) as string[];
  if (!known.includes(upper)) throw new BindingError(scope.node.path, `unknown HTTP method '${method}'`);
  return upper as HttpMethod;
}
