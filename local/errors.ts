/** Errors of the local stack's own processes (Chromium, DynamoDB Local, the control channel). */

/** Chromium did not start, or did not open its DevTools port in time. */
export class ChromiumLaunchError extends Error {
  readonly userDataDir: string;
  constructor(message: string, context: { userDataDir: string }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ChromiumLaunchError';
    this.userDataDir = context.userDataDir;
  }
}

/** A request the control server refuses, with its HTTP status. */
export class ControlRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ControlRequestError';
  }
}

/** `java` is not on the PATH. */
export class JavaMissingError extends Error {
  readonly command: string;
  constructor(command: string, options?: ErrorOptions) {
    super(
      `DynamoDB Local needs Java 17 but "${command}" was not found: run \`npm run setup\`, or \`apt-get install -y openjdk-17-jre-headless\``,
      options,
    );
    this.name = 'JavaMissingError';
    this.command = command;
  }
}

/** The Chromium binary the local browser service launches is not there (or not executable). */
export class ChromiumMissingError extends Error {
  readonly executablePath: string;
  constructor(executablePath: string, options?: ErrorOptions) {
    super(
      `the local browser service needs Chromium but "${executablePath}" was not found or is not executable: run \`npm run setup\`, or \`apt-get install -y chromium\`, or set CHROMIUM_PATH`,
      options,
    );
    this.name = 'ChromiumMissingError';
    this.executablePath = executablePath;
  }
}

/** DynamoDB Local exited or did not answer in time. */
export class DynamoDbLocalStartError extends Error {
  readonly port: number;
  readonly output: string;
  constructor(message: string, context: { port: number; output: string }, options?: ErrorOptions) {
    super(
      `${message} (port ${context.port})${context.output ? `: ${context.output.trim().slice(-500)}` : ''}`,
      options,
    );
    this.name = 'DynamoDbLocalStartError';
    this.port = context.port;
    this.output = context.output;
  }
}
