/** What a load simulation runs: how many jobs, over how many tenants, and how the stand-ins behave. */
export interface ScaleOptions {
  jobs: number;
  tenants: number;
  /** Scripted work of one step, ms. */
  stepMs: number;
  /** How long the scripted person takes to approve, ms. */
  approveMs: number;
  /** The whole run is given up after this long. */
  timeoutMs: number;
  /** Sockets of the engine's DynamoDB and Step Functions clients (the SDK's default: 50). */
  sockets: number;
  dataDir: string;
  log(line: string): void;
  /** PIDs the run started (DynamoDB Local), checked gone at the end. */
  pids: Set<number>;
}
