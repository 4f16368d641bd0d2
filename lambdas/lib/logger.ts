import type { Logger } from './playbooks/contract.ts';
import { ALL_TENANTS, redact, redactText } from './redact.ts';

/**
 * Structured JSON logs, one line per event, redacted on the way out. Context fields (job id,
 * tenant, step) are bound once with `child`.
 */
export interface BelayLogger extends Logger {
  child(fields: Record<string, unknown>): BelayLogger;
}

type Level = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LoggerOptions {
  service?: string;
  level?: Level;
  /** Where lines go (default: stdout for info/debug, stderr for warn/error). */
  sink?: (line: string, level: Level) => void;
  fields?: Record<string, unknown>;
}

function defaultSink(line: string, level: Level): void {
  if (level === 'warn' || level === 'error') process.stderr.write(`${line}\n`);
  else process.stdout.write(`${line}\n`);
}

/** Creates a redacting JSON logger. `LOG_LEVEL` sets the default level. */
export function createLogger(options: LoggerOptions = {}): BelayLogger {
  const envLevel = process.env.LOG_LEVEL?.toLowerCase();
  const level: Level = options.level ?? (envLevel && envLevel in LEVELS ? (envLevel as Level) : 'info');
  const sink = options.sink ?? defaultSink;
  const base = { service: options.service ?? 'belay', ...options.fields };

  const write = (lvl: Level, message: string, fields?: Record<string, unknown>): void => {
    if (LEVELS[lvl] < LEVELS[level]) return;
    // Logs are read by operators, not tenants: masked with every tenant's registered secrets.
    const record = redact({ level: lvl, time: new Date().toISOString(), ...base, ...fields }, ALL_TENANTS);
    sink(JSON.stringify({ ...record, message: redactText(message, ALL_TENANTS) }), lvl);
  };

  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger({ ...options, level, sink, fields: { ...options.fields, ...fields } }),
  };
}
