import type { AccountDirectory, SecretStore } from '../accounts/types.ts';
import type { ActionCacheStore } from '../agent/cache/store.ts';
import type { BrowserAdapter } from '../browser/types.ts';
import type { Capacity } from '../capacity/types.ts';
import type { ScreenshotStore } from '../evidence/store.ts';
import type { Ledger } from '../ledger/index.ts';
import type { ScreenshotRef } from '../ledger/types.ts';
import type { BelayLogger } from '../logger.ts';
import type { FaultPoint } from '../playbooks/contract.ts';
import type { PlaybookRegistry } from '../playbooks/registry.ts';
import type { TakeoverWaitRequest, WaitRequest } from './waits.ts';

/** Where an application lives for this deployment, and which domains its pages may reach. */
export interface ApplicationEndpoint {
  baseUrl: string;
  allowedDomains: string[];
}

/**
 * People are told when a job waits for them, and when a playbook's drift check turns red
 * (EventBridge in AWS; a log line and optional webhook locally).
 */
export interface WaitNotifier {
  waiting(event: WaitEvent): Promise<void>;
  checkFailed(event: CheckFailedEvent): Promise<void>;
}

/** A drift check found a step that is not as its playbook expects, after a check that was fine (or none). */
export interface CheckFailedEvent {
  tenantId: string;
  /** The check's job id. */
  jobId: string;
  playbook: string;
  step: string;
  /** layout-changed, not-verified, signed-out, failed. */
  finding: string;
  detail: string;
}

export interface WaitEvent {
  tenantId: string;
  jobId: string;
  kind: 'approval' | 'mfa' | 'review' | 'takeover';
  step: string;
  reason: string;
  expiresAt: string;
  /** A takeover: what the step asks the person to do in the browser. */
  question?: string;
  /** What the person decides on: the evidence recorded so far (redacted). */
  evidence: Record<string, unknown>[];
}

export interface EngineSettings {
  /** Sessions end after this long with no client; covers the longest restart window (human waits included). */
  sessionIdleTimeoutMinutes: number;
  sessionMaxDurationMinutes: number;
  /** Backoff before a step failure is retried (seconds, doubled per retry, capped). */
  retryBackoffSeconds: number;
  /** How long a queued job waits before asking for capacity again (at first; see `pollAfterSeconds`). */
  capacityPollSeconds: number;
  /** A job QUEUED longer than this fails (`queue-timeout`) rather than waiting on indefinitely. */
  maxQueueSeconds: number;
  /**
   * A human wait (approval, review) longer than this parks the job: its sessions end (profiles
   * persisted) and its lease is released until the person answers. Shorter waits keep the
   * session, so `sessionIdleTimeoutMinutes` must cover this (the runtime sizes it so).
   */
  parkAfterSeconds: number;
  /** A browser lease not renewed for this long has expired (its holder died). */
  leaseTtlSeconds: number;
  /**
   * The write guard during write steps (`lambdas/lib/browser/write-guard.ts`): each unsafe
   * request on a fresh connection (`prevent`), the browser's own resends read from its network
   * log (`detect`). Both by default; `BELAY_WRITE_GUARD=detect|off` turns parts off.
   */
  writeGuard: { prevent: boolean; detect: boolean };
  /** The team volume jobs' files are kept in (`BELAY_FILES_VOLUME`), created on first use. */
  filesVolume: string;
}

export const DEFAULT_SETTINGS: EngineSettings = {
  sessionIdleTimeoutMinutes: 30,
  sessionMaxDurationMinutes: 24 * 60,
  retryBackoffSeconds: 2,
  capacityPollSeconds: 5,
  maxQueueSeconds: 86_400,
  parkAfterSeconds: 900,
  leaseTtlSeconds: 900,
  writeGuard: { prevent: true, detect: true },
  filesVolume: 'belay-files',
};

/** Everything a handler's core needs, built once at the edge (cold start) and injected. */
export interface EngineDeps {
  ledger: Ledger;
  browser: BrowserAdapter;
  /** The playbooks this deployment runs (found in the playbook folders; the engine names none). */
  playbooks: PlaybookRegistry;
  accounts: AccountDirectory;
  secrets: SecretStore;
  capacity: Capacity;
  applications: Record<string, ApplicationEndpoint>;
  notifier: WaitNotifier;
  /** Where screenshots of the job's pages are kept (off when no bucket is configured). */
  screenshots: ScreenshotStore;
  /** Agent steps' verified action lists across jobs, by tenant and playbook version (`lambdas/lib/agent/cache`). */
  actionCache: ActionCacheStore;
  clock: () => Date;
  log: BelayLogger;
  /** Remembers which job holds a browser session, so the provider's session events find the job. */
  recordSessionOwner(sessionId: string, tenantId: string, jobId: string, app: string): Promise<void>;
  /** The local Lambda runner's fault hook; a no-op in AWS. */
  faultPoint(
    point: FaultPoint,
    info: { jobId: string; step: string; stepIndex: number; action?: number },
  ): Promise<void>;
  settings: EngineSettings;
}

/** Every task handler of the state machine takes this. */
export interface JobRef {
  tenantId: string;
  jobId: string;
}

/** What RunStep (and Reconcile, Reauthenticate) tell the state machine to do next. */
export type StepOutcome =
  | { outcome: 'completed'; step: string; stepIndex: number; nextStep: number; stepCount: number }
  | { outcome: 'finished'; step: string; stepCount: number }
  | { outcome: 'needs_approval'; step: string; stepIndex: number; wait: WaitRequest }
  | { outcome: 'auth_expired'; step: string; app: string; detail: string }
  | { outcome: 'mfa_required'; step: string; app: string; detail: string }
  | { outcome: 'session_lost'; step: string; app: string; detail: string }
  /** `screenshot`: the page when the job asked a person (kept on the invocation's entry). */
  | { outcome: 'uncertain'; step: string; detail: string; screenshot?: ScreenshotRef }
  | { outcome: 'layout_changed'; step: string; detail: string; wait: WaitRequest; screenshot?: ScreenshotRef }
  /** A person must look first (the application holds a write more than once): AwaitReview. */
  | { outcome: 'needs_review'; step: string; detail: string; wait: WaitRequest; screenshot?: ScreenshotRef }
  /** The step asked a person to act in the live browser (`ctx.takeover`): AwaitTakeover. */
  | {
      outcome: 'takeover_requested';
      step: string;
      detail: string;
      wait: TakeoverWaitRequest;
      screenshot?: ScreenshotRef;
    }
  | { outcome: 'retry'; step: string; retryAfterSeconds: number; detail: string }
  /** The lease expired and the cap is full: sessions ended, back to Start to queue. */
  | { outcome: 'lease_lost'; step: string; detail: string }
  /** Cancelled once the write in flight was settled: Finish cleans up (sessions, leases). */
  | { outcome: 'cancelled'; step: string }
  | { outcome: 'stopped'; status: string };
