/**
 * The parts of API Gateway HTTP API (payload format 2.0) events this API uses. Declared here
 * rather than taken from `@types/aws-lambda` so the local server can build the same events.
 */

/** What the Lambda authorizer put in its simple response's `context`. */
export interface AuthorizerContext {
  tenantId: string;
  /** Comma-separated roles (authorizer context values must be scalars). */
  roles: string;
  keyId: string;
}

/** An HTTP API request, payload format 2.0. Header names are lower case. */
export interface HttpApiEvent {
  version: '2.0';
  routeKey: string;
  rawPath: string;
  rawQueryString: string;
  headers: Record<string, string | undefined>;
  /** The request's cookies (`name=value` each): payload 2.0 moves them out of `headers`. */
  cookies?: string[];
  queryStringParameters?: Record<string, string | undefined>;
  pathParameters?: Record<string, string | undefined>;
  body?: string;
  isBase64Encoded: boolean;
  requestContext: {
    requestId: string;
    routeKey: string;
    stage: string;
    timeEpoch: number;
    domainName?: string;
    http: { method: string; path: string; protocol: string; sourceIp: string; userAgent: string };
    authorizer?: { lambda?: Partial<AuthorizerContext> | null };
  };
}

export interface HttpApiResult {
  statusCode: number;
  headers?: Record<string, string>;
  /** `Set-Cookie` values (payload 2.0). */
  cookies?: string[];
  body?: string;
  isBase64Encoded?: boolean;
}

/** The request a Lambda authorizer of an HTTP API receives (payload format 2.0). */
export interface AuthorizerEvent {
  version?: string;
  type?: string;
  routeArn?: string;
  routeKey?: string;
  identitySource?: string[] | null;
  headers?: Record<string, string | undefined>;
  requestContext?: { http?: { sourceIp?: string } };
}

/** A simple authorizer response (`enableSimpleResponses`). */
export interface AuthorizerResult {
  isAuthorized: boolean;
  context?: Record<string, string>;
}

/** A header by case-insensitive name (API Gateway lower-cases them; other callers may not). */
export function header(
  headers: Record<string, string | undefined> | undefined,
  name: string,
): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}
