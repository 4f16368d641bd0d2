/** A demo site's fault switches and modes (set through its admin endpoint, persisted with its state). */
import type { LatencyProfile } from './latency.ts';

/**
 * How a dropped write response is dropped, after the write committed:
 * - `status-line`: a status line goes out, then the connection closes (the browser shows a broken page);
 * - `reset`: the connection is reset (TCP RST) without a single byte of response;
 * - `close`: the connection is closed (FIN) without a single byte of response.
 * With no byte at all a browser may send the same request again by itself on another
 * connection: a site that does not de-duplicate then commits it twice.
 */
export const DROP_MODES = ['status-line', 'reset', 'close'] as const;
export type DropMode = (typeof DROP_MODES)[number];

/** Fault switches and modes, set through the admin endpoint and persisted with the state. */
export interface FaultFlags {
  changedLayout: boolean;
  /** Commit the next write, then drop its response (see {@link DropMode}). */
  dropNextWriteResponse: boolean;
  /** How the next dropped response is dropped. */
  dropMode: DropMode;
  /** Delay every page and form response by this many milliseconds. */
  slowMs: number;
  /** Delay every page and form response by a time drawn from this profile (null: none). */
  latency: LatencyProfile | null;
  /**
   * De-duplicate writes by their idempotency key (a repeated key answers with the first
   * write's result). Off: like most real sites, every write request that arrives commits a
   * new record (the key is kept as the record's reference, so a probe can still count them).
   */
  dedupe: boolean;
  /**
   * Refuse every write with a visible error and commit nothing (the bank declines the card,
   * the record is locked): what a write step meets when the application says no.
   */
  refuseWrites: boolean;
  /** Answer every page and form with 503 (the site is briefly down); the admin endpoint still answers. */
  unavailable: boolean;
  /**
   * Each page sends requests of its own as a form is submitted, as real pages do (an analytics
   * call, a notification poll): {@link BUSY_REQUESTS} same-origin GETs to `/__busy`, answered
   * 10 to 80 ms later on kept-alive connections, so they are in flight while the write goes.
   */
  busyPages: boolean;
}

/** Requests a busy page sends as a form is submitted: more than the 6 connections a browser opens to a host. */
export const BUSY_REQUESTS = 8;

/** The fault switches of a fresh site: no faults, de-duplicating by key. */
export const DEFAULT_FAULTS: FaultFlags = {
  changedLayout: false,
  dropNextWriteResponse: false,
  dropMode: 'status-line',
  slowMs: 0,
  latency: null,
  dedupe: true,
  refuseWrites: false,
  unavailable: false,
  busyPages: false,
};

/** What a site says when it refuses a write (`refuseWrites`). */
export const REFUSAL_MESSAGE = 'The request was declined: the service is not accepting changes right now.';
