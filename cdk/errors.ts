import { BelayError } from '../lambdas/lib/errors.ts';

/** Errors raised while the CDK app is built; each names what to fix. */

/** A `belay:*` context value is missing its expected form. */
export class ConfigError extends BelayError {
  /** The context key, e.g. `belay:removalPolicy`. */
  readonly key: string;
  /** The value that was given. */
  readonly value: unknown;

  constructor(key: string, value: unknown, expected: string, options?: ErrorOptions) {
    super(
      'ConfigError',
      'misconfigured',
      `Context '${key}' must be ${expected}; got ${JSON.stringify(value)}. ` +
        `Set it in cdk.json or pass --context ${key}=<value>.`,
      options,
    );
    this.key = key;
    this.value = value;
  }
}

/** A `bindTable`/`bindStateMachine` call asks for an environment variable or an action it may not have. */
export class BindingError extends BelayError {
  /** The construct path of the function being bound. */
  readonly functionPath: string;

  constructor(functionPath: string, message: string, options?: ErrorOptions) {
    super('BindingError', 'binding', `${functionPath}: ${message}`, options);
    this.functionPath = functionPath;
  }
}

/** A package listed in `runtimeModules` cannot be shipped next to a function's bundle. */
export class RuntimeModuleError extends BelayError {
  /** The npm package name. */
  readonly moduleName: string;

  constructor(moduleName: string, message: string, options?: ErrorOptions) {
    super('RuntimeModuleError', 'runtime-module', `runtimeModules '${moduleName}': ${message}`, options);
    this.moduleName = moduleName;
  }
}
