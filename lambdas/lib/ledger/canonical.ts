import { createHash } from 'node:crypto';
import type { JobRequest } from './types.ts';

/**
 * Canonical JSON: object keys sorted, `undefined` members dropped (as `JSON.stringify`
 * does), so two requests that mean the same thing hash the same whatever their key order.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}

/**
 * The request fields that define a job, in a fixed shape: extra fields a caller passes are
 * ignored, and `approvals` (a set of step ids) is sorted so its order does not matter.
 */
export function requestFields(request: JobRequest): JobRequest {
  const fields: JobRequest = {
    playbook: request.playbook,
    inputs: request.inputs,
    accounts: request.accounts,
    approvals: [...request.approvals].sort(),
    retryBudget: request.retryBudget,
  };
  if (request.deadline !== undefined) fields.deadline = request.deadline;
  if (request.model !== undefined) fields.model = request.model;
  if (request.mode !== undefined) fields.mode = request.mode;
  return fields;
}

/** sha256 (hex) of the canonical JSON of the request: equal for a repeat, different for a conflicting reuse of a job id. */
export function requestHash(request: JobRequest): string {
  return createHash('sha256')
    .update(canonicalJson(requestFields(request)))
    .digest('hex');
}
