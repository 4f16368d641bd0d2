import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  anchorSignature,
  signAnchorDelivery,
  verifyAnchorSignature,
} from '../../../lambdas/lib/api/webhooks/signature.ts';
import { findSessionOwner, recordSessionOwner } from '../../../lambdas/lib/engine/session-owners.ts';
import { call, order, waitForJob } from './support/http.ts';
import { TENANT_A, useApiStack } from './support/stack.ts';

const SECRET = 'whsec_current';
const OLD_SECRET = 'whsec_previous';
const stack = useApiStack({ webhookSecrets: [SECRET, OLD_SECRET] });

const now = () => Math.floor(Date.now() / 1000);
const ledger = () => stack.deps().engine.ledger;

function event(type: string, data: Record<string, unknown>, id = `evt_${randomUUID()}`): string {
  return JSON.stringify({ id, type, created: new Date().toISOString(), project_id: 'p', text: type, data });
}

function deliver(body: string, headers: Record<string, string>) {
  return call(stack.url(), 'POST', '/webhooks/anchor', { raw: body, headers });
}

describe('Function: verifyAnchorSignature', () => {
  const body = event('session.completed', { session_id: 's1' });
  const at = new Date('2026-05-24T12:00:00Z');
  const ts = Math.floor(at.getTime() / 1000);
  const check = (sig: string | undefined, stamp: string | undefined, raw = body, when = at) =>
    verifyAnchorSignature({
      secrets: [SECRET],
      signatureHeader: sig,
      timestampHeader: stamp,
      rawBody: raw,
      now: when,
      toleranceSeconds: 300,
    });
  const good = `t=${ts},v1=${anchorSignature(SECRET, ts, body)}`;

  it('accepts a delivery signed over v0:<timestamp>:<raw body>', () => {
    expect(check(good, String(ts))).toEqual({ ok: true, timestamp: ts });
    expect(check(good, undefined)).toEqual({ ok: true, timestamp: ts });
  });

  it.each([
    ['no signature', undefined, String(ts), body, at, 'missing'],
    ['no timestamp anywhere', `v1=${anchorSignature(SECRET, ts, body)}`, undefined, body, at, 'missing'],
    ['timestamps that disagree', good, String(ts + 1), body, at, 'malformed'],
    ['a non-numeric timestamp', `t=abc,v1=${'0'.repeat(64)}`, 'abc', body, at, 'malformed'],
    ['a tampered body', good, String(ts), body.replace('s1', 's2'), at, 'mismatch'],
    ['another secret', `t=${ts},v1=${anchorSignature('nope', ts, body)}`, String(ts), body, at, 'mismatch'],
    ['a stale delivery', good, String(ts), body, new Date(at.getTime() + 301_000), 'stale'],
    ['a delivery from the future', good, String(ts), body, new Date(at.getTime() - 301_000), 'stale'],
  ])('refuses %s', (_what, sig, stamp, raw, when, reason) => {
    const result = check(sig, stamp, raw, when);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toBe(reason);
  });
});

describe('POST /webhooks/anchor', () => {
  async function waitingJob(jobId: string) {
    expect(
      (await call(stack.url(), 'POST', '/jobs', { key: stack.key('a'), body: order(jobId) })).status,
    ).toBe(202);
    const job = await waitForJob(ledger(), TENANT_A, jobId, 'WAITING_APPROVAL');
    const sessionId = job.sessions.shop?.sessionId as string;
    await recordSessionOwner(stack.ddb.doc(), stack.ddb.tableName(), sessionId, TENANT_A, jobId, {
      app: 'shop',
    });
    return { job, sessionId };
  }

  it('marks the job’s session gone on a signed session-ended event; the job then opens a new one', async () => {
    const { sessionId } = await waitingJob('wh-1');
    expect(await findSessionOwner(stack.ddb.doc(), stack.ddb.tableName(), sessionId)).toMatchObject({
      jobId: 'wh-1',
    });
    const body = event('session.completed', { session_id: sessionId });
    const res = await deliver(body, signAnchorDelivery(SECRET, body, now()));
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ received: true, action: 'session-ended' });
    const after = await ledger().readJob(TENANT_A, 'wh-1');
    expect(after.job.sessions.shop).toBeUndefined();
    expect(after.entries.at(-1)).toMatchObject({ type: 'session-ended', sessionId, actor: 'anchor-webhook' });

    // A delivery signed with the previous secret (rotation) is accepted too; this one changes nothing.
    const other = event('session.failed', { session_id: sessionId });
    const rotated = await deliver(other, signAnchorDelivery(OLD_SECRET, other, now()));
    expect(rotated.status).toBe(200);
    expect(rotated.json.action).toMatch(/^ignored/);

    const approve = await call(stack.url(), 'POST', '/jobs/wh-1/decisions', {
      key: stack.key('a'),
      body: { step: 'place-order', decision: 'approve' },
    });
    expect(approve.status).toBe(200);
    const done = await waitForJob(ledger(), TENANT_A, 'wh-1', 'SUCCEEDED');
    expect(done.sessions.shop?.sessionId).not.toBe(sessionId);
  });

  it('refuses a replay of an accepted delivery (409) and changes nothing', async () => {
    const { sessionId } = await waitingJob('wh-2');
    const body = event('session.recording.ready', { session_id: sessionId });
    const headers = signAnchorDelivery(SECRET, body, now());
    expect((await deliver(body, headers)).status).toBe(200);
    const before = await ledger().readJob(TENANT_A, 'wh-2');
    const replay = await deliver(body, headers);
    expect(replay.status).toBe(409);
    expect(replay.json.error.code).toBe('duplicate_event');
    // The same event id re-signed later is still the same event.
    const resigned = await deliver(body, signAnchorDelivery(SECRET, body, now() + 1));
    expect(resigned.status).toBe(409);
    expect(await ledger().readJob(TENANT_A, 'wh-2')).toEqual(before);
  });

  it.each([
    ['forged (wrong secret)', (b: string) => signAnchorDelivery('whsec_attacker', b, now())],
    ['stale (10 minutes old)', (b: string) => signAnchorDelivery(SECRET, b, now() - 600)],
    ['unsigned', () => ({})],
    [
      'signed over another body',
      (b: string) => signAnchorDelivery(SECRET, b.replace('"data"', '"dat"'), now()),
    ],
  ])('refuses a %s delivery with 401 and changes nothing', async (_what, sign) => {
    const { sessionId } = await waitingJob(`wh-f-${Math.random().toString(36).slice(2, 8)}`);
    const body = event('session.completed', { session_id: sessionId });
    const owner = await findSessionOwner(stack.ddb.doc(), stack.ddb.tableName(), sessionId);
    const before = await ledger().readJob(TENANT_A, owner?.jobId as string);
    const res = await deliver(body, sign(body));
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('invalid_signature');
    expect(await ledger().readJob(TENANT_A, owner?.jobId as string)).toEqual(before);
    // The refused delivery did not burn its event id: the genuine one still goes through.
    expect((await deliver(body, signAnchorDelivery(SECRET, body, now()))).json.action).toBe('session-ended');
  });

  it('ignores events for sessions no job holds, and refuses bodies that are not Anchor events', async () => {
    const body = event('session.completed', { session_id: 'sess_unknown' });
    const res = await deliver(body, signAnchorDelivery(SECRET, body, now()));
    expect(res.status).toBe(200);
    expect(res.json.action).toMatch(/no job holds/);
    const notJson = 'hello';
    expect((await deliver(notJson, signAnchorDelivery(SECRET, notJson, now()))).status).toBe(400);
    const noId = JSON.stringify({ type: 'session.completed' });
    expect((await deliver(noId, signAnchorDelivery(SECRET, noId, now()))).status).toBe(400);
    const big = event('session.completed', { pad: 'x'.repeat(300_000) });
    expect((await deliver(big, signAnchorDelivery(SECRET, big, now()))).status).toBe(413);
  });
});
