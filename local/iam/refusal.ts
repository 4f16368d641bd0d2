/**
 * The response AWS sends when IAM refuses a call, per protocol, so that the SDK turns it into
 * the very error a deployed function gets (its service's exception with name
 * `AccessDeniedException`, `$fault: 'client'`, the HTTP status and AWS's message).
 */
import { randomUUID } from 'node:crypto';
import type { IamRequest } from './evaluate.ts';
import { servicePrefix } from './requests.ts';

/** An HTTP response as the SDK's deserializers read it. */
export interface RefusalResponse {
  statusCode: number;
  reason?: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

/**
 * AWS's message for a refused call.
 *
 * @example
 * // User: arn:aws:sts::000000000000:assumed-role/Belay-RunStepRole64636B92/belay-run-step is not
 * // authorized to perform: dynamodb:UpdateItem on resource: arn:aws:dynamodb:...:table/belay-local
 * // because no identity-based policy allows the dynamodb:UpdateItem action
 */
export function refusalMessage(callerArn: string, request: IamRequest, explicitDeny: boolean): string {
  const onResource = request.resource === '*' ? '' : ` on resource: ${request.resource}`;
  const why = explicitDeny
    ? 'with an explicit deny in an identity-based policy'
    : `because no identity-based policy allows the ${request.action} action`;
  return `User: ${callerArn} is not authorized to perform: ${request.action}${onResource} ${why}`;
}

/** The JSON 1.0 services (DynamoDB, Step Functions); other JSON services speak 1.1. */
const JSON_1_0 = new Set(['dynamodb', 'states']);
/** REST-JSON services: a 403 with the error type in a header. */
const REST_JSON = new Set(['lambda', 'bedrock']);

/** The refusal of one call by client (`DynamoDBClient`), as that service answers it. */
export function refusalResponse(clientName: string, message: string): RefusalResponse {
  const prefix = servicePrefix(clientName);
  const requestId = randomUUID();
  const date = new Date().toUTCString();
  if (prefix === 's3') {
    const escaped = message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>${escaped}</Message><RequestId>${requestId}</RequestId><HostId>local</HostId></Error>`;
    return {
      statusCode: 403,
      reason: 'Forbidden',
      headers: { 'content-type': 'application/xml', 'x-amz-request-id': requestId, date },
      body: Buffer.from(xml),
    };
  }
  if (REST_JSON.has(prefix)) {
    return {
      statusCode: 403,
      reason: 'Forbidden',
      headers: {
        'content-type': 'application/json',
        'x-amzn-errortype': 'AccessDeniedException',
        'x-amzn-requestid': requestId,
        date,
      },
      body: Buffer.from(JSON.stringify({ Message: message, message })),
    };
  }
  const contentType = JSON_1_0.has(prefix) ? 'application/x-amz-json-1.0' : 'application/x-amz-json-1.1';
  return {
    statusCode: 400,
    reason: 'Bad Request',
    headers: { 'content-type': contentType, 'x-amzn-requestid': requestId, date },
    body: Buffer.from(
      JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', Message: message, message }),
    ),
  };
}
