import type { LogItem } from '@aws-lambda-powertools/logger';
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { ConstructorOptions } from '@aws-lambda-powertools/logger/types';
import { RedactingLogFormatter } from './observability/log-formatter.ts';
import type { Logger } from './playbooks/contract.ts';

/**
 * Structured JSON logs through Powertools for AWS Lambda's Logger, one line per event,
 * redacted on the way out (`RedactingLogFormatter`). In Lambda, Powertools' middy middleware
 * (`injectLambdaContext`, applied by the engine and API handlers) adds the invocation's
 * context (`function_name`, `function_request_id`, `cold_start`, `xray_trace_id`); Belay adds
 * its correlation fields with `correlate` (for the invocation) or `child` (for good).
 */
export interface BelayLogger extends Logger {
  /** A logger whose every line also carries `fields` (and this one's context and correlation). */
  child(fields: Record<string, unknown>): BelayLogger;
  /** Adds correlation fields to every later line of the current invocation (the middleware clears them). */
  correlate(fields: CorrelationFields): void;
  /** The Powertools logger underneath, for its middy middleware. */
  readonly powertools: PowertoolsLogger;
}

/**
 * What ties a log line to the work it is about. Bounded or not, these are log fields only:
 * never metric dimensions (see `lambdas/lib/metrics/names.ts`).
 */
export interface CorrelationFields {
  tenantId?: string;
  jobId?: string;
  step?: string;
  attempt?: number;
  sessionId?: string;
  /** The Step Functions execution name coordinating the job. */
  execution?: string;
}

type Level = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

export interface LoggerOptions {
  /** The `service` of every line (default `belay`). */
  service?: string;
  /** Lowest level written (default `LOG_LEVEL`, else info). */
  level?: Level;
  /** Where lines go instead of stdout/stderr (tests, tools). */
  sink?: (line: string, level: Level) => void;
  /** Fields on every line. */
  fields?: Record<string, unknown>;
}

/** Powertools' Logger writing to a sink of our choosing; its children (`createChild`) keep it. */
class SinkLogger extends PowertoolsLogger {
  readonly #sink: LoggerOptions['sink'];

  constructor(options: ConstructorOptions, sink: LoggerOptions['sink']) {
    super(options);
    this.#sink = sink;
  }

  protected override printLog(logLevel: number, log: LogItem): void {
    if (!this.#sink) {
      super.printLog(logLevel, log);
      return;
    }
    log.prepareForPrint();
    this.#sink(JSON.stringify(log.getAttributes(), this.getJsonReplacer()), levelName(logLevel));
  }

  protected override createLogger(options?: ConstructorOptions): PowertoolsLogger {
    return new SinkLogger(options ?? {}, this.#sink);
  }
}

/** Powertools' thresholds (TRACE 6 ... CRITICAL 24) to the four levels Belay writes. */
function levelName(threshold: number): Level {
  if (threshold >= 20) return 'error';
  if (threshold >= 16) return 'warn';
  if (threshold >= 12) return 'info';
  return 'debug';
}

function levelFrom(options: LoggerOptions): Level {
  const env = process.env.LOG_LEVEL?.toLowerCase();
  return options.level ?? LEVELS.find((l) => l === env) ?? 'info';
}

function wrap(logger: PowertoolsLogger): BelayLogger {
  return {
    debug: (message, fields) => logger.debug(message, fields ?? {}),
    info: (message, fields) => logger.info(message, fields ?? {}),
    warn: (message, fields) => logger.warn(message, fields ?? {}),
    error: (message, fields) => logger.error(message, fields ?? {}),
    child: (fields) => wrap(logger.createChild({ persistentKeys: fields })),
    correlate: (fields) => {
      const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
      logger.appendKeys(defined);
    },
    powertools: logger,
  };
}

/**
 * Creates a redacting JSON logger (Powertools' Logger with `RedactingLogFormatter`).
 *
 * @example
 * const log = createLogger({ service: 'belay-engine' });
 * log.child({ jobId }).info('step verified', { step: 'place-order' });
 */
export function createLogger(options: LoggerOptions = {}): BelayLogger {
  const logger = new SinkLogger(
    {
      serviceName: options.service ?? 'belay',
      logLevel: levelFrom(options).toUpperCase() as 'INFO',
      logFormatter: new RedactingLogFormatter(),
      ...(options.fields ? { persistentKeys: options.fields } : {}),
    },
    options.sink,
  );
  return wrap(logger);
}

const processLoggers = new Map<string, BelayLogger>();

/**
 * The process's logger of `service`, made once: the engine's dependencies and the handler's
 * middleware (which adds each invocation's Lambda context to it) share this one instance.
 */
export function processLogger(service: string): BelayLogger {
  let logger = processLoggers.get(service);
  if (!logger) {
    logger = createLogger({ service });
    processLoggers.set(service, logger);
  }
  return logger;
}
