import { LogFormatter, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { ALL_TENANTS, redact, redactText } from '../redact.ts';

/**
 * Powertools' log layout (`level`, `message`, `timestamp`, `service`, the Lambda context as
 * `function_name`, `function_request_id`, `cold_start`..., `xray_trace_id`) with Belay's
 * redaction applied to the whole line on its way out: key names that say secret
 * (`password`, `token`, `authorization`...), card numbers, bearer tokens, API keys and every
 * tenant's registered credentials in free text. Logs are read by operators, not tenants, so
 * they are masked with every tenant's secrets (`ALL_TENANTS`).
 *
 * An `Error` keeps Powertools' shape (`name`, `location`, `message`, `stack`, `cause`), its
 * texts redacted like the rest.
 */
export class RedactingLogFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const base: LogAttributes = {
      level: attributes.logLevel,
      message: redactText(attributes.message ?? '', ALL_TENANTS),
      timestamp: this.formatTimestamp(attributes.timestamp),
      service: attributes.serviceName,
      cold_start: attributes.lambdaContext?.coldStart,
      function_arn: attributes.lambdaContext?.invokedFunctionArn,
      function_memory_size: attributes.lambdaContext?.memoryLimitInMB,
      function_name: attributes.lambdaContext?.functionName,
      function_request_id: attributes.lambdaContext?.awsRequestId,
      sampling_rate: attributes.sampleRateValue,
      xray_trace_id: attributes.xRayTraceId,
    };
    const fields: LogAttributes = {};
    for (const [key, value] of Object.entries(additional)) {
      fields[key] = value instanceof Error ? this.formatError(value) : value;
    }
    return new LogItem({ attributes: base }).addAttributes(redact(fields, ALL_TENANTS));
  }
}
