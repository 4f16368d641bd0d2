/** Named errors of the demo sites. */

/** No demo account with that username on that site. */
export class UnknownDemoAccountError extends Error {
  readonly site: string;
  readonly username: string;
  constructor(site: string, username: string, options?: ErrorOptions) {
    super(`No demo account ${username} on ${site}`, options);
    this.name = 'UnknownDemoAccountError';
    this.site = site;
    this.username = username;
  }
}

/** The state file under `dataDir` exists but cannot be read as this site's state. */
export class SiteStateCorruptError extends Error {
  readonly file: string;
  constructor(file: string, options?: ErrorOptions) {
    super(`Cannot read demo site state from ${file}`, options);
    this.name = 'SiteStateCorruptError';
    this.file = file;
  }
}

/** A site could not listen on its port. */
export class SiteStartError extends Error {
  readonly site: string;
  readonly port: number;
  constructor(site: string, port: number, options?: ErrorOptions) {
    super(`Cannot start demo site ${site} on 127.0.0.1:${port}`, options);
    this.name = 'SiteStartError';
    this.site = site;
    this.port = port;
  }
}

/** An admin endpoint answered with an error (wrong token, not loopback, bad request). */
export class AdminRequestError extends Error {
  readonly status: number;
  readonly path: string;
  constructor(path: string, status: number, body: string, options?: ErrorOptions) {
    super(`Admin request ${path} failed with ${status}: ${body.slice(0, 200)}`, options);
    this.name = 'AdminRequestError';
    this.status = status;
    this.path = path;
  }
}

/** A latency profile (`--site-latency`) that does not parse; the message names where it came from. */
export class LatencyProfileError extends Error {
  readonly source: string;
  constructor(source: string, problem: string, options?: ErrorOptions) {
    super(`${source}: ${problem} (expected p50=<ms>,p95=<ms>, e.g. p50=300,p95=1200)`, options);
    this.name = 'LatencyProfileError';
    this.source = source;
  }
}
