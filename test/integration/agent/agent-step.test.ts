/**
 * Agent steps in real Chromium against the demo CRM, run as the engine runs a step (harness):
 * the local policy fills and submits the form; a crash after each recorded action resumes with
 * no model call for what is recorded and exactly one committed write; a renamed target is
 * healed with one call; a goto off the job's domains is refused and recorded.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoCredentials } from '../../../demo/accounts.ts';
import type { SiteAdmin } from '../../../demo/sites/admin-client.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { startSites } from '../../../demo/sites/index.ts';
import { agentStep } from '../../../lambdas/lib/agent/agent-step.ts';
import { configureAgentModels } from '../../../lambdas/lib/agent/registry.ts';
import type { StepContext } from '../../../lambdas/lib/playbooks/contract.ts';
import { PersonAskedError } from '../../../lambdas/lib/playbooks/errors.ts';
import { memoryStepActions } from '../../../lambdas/lib/playbooks/memory-actions.ts';
import {
  type CrmContactAgentInputs,
  crmContactAgentPlaybook,
  updateContactByAgent as step,
} from '../../../playbooks/crm-agent/index.ts';
import { crm as crmApplication } from '../../../playbooks/demo-sites.ts';
import { CountingPolicy } from '../../support/agent.ts';
import { startModelServer, WIRE } from '../../support/model-servers.ts';
import {
  contextFor,
  type Job,
  launchChromium,
  newJob,
  ready,
  signedInContext,
} from '../playbooks/harness.ts';

const INPUTS: CrmContactAgentInputs = {
  customerId: 'C-1003',
  contactName: 'Mei Chen-Ward',
  phone: '+44 117 496 0999',
};

class Crash extends Error {}

let browser: Browser;
let sites: StartedSites;
let crm: SiteAdmin;
let context: BrowserContext;
let page: Page;
let policy: CountingPolicy;

beforeAll(async () => {
  sites = await startSites();
  crm = siteAdmin(sites.crm.baseUrl, sites.adminToken);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await sites?.stop();
});

beforeEach(async () => {
  await crm.reset();
  context = await browser.newContext();
  page = await context.newPage();
  await signedInContext(context, sites.crm.baseUrl, 'crm', 'ada@example.com');
  policy = new CountingPolicy();
  configureAgentModels(() => policy);
});

afterEach(async () => {
  await context.close();
});

function jobAndRecord(): { job: Job<CrmContactAgentInputs>; actions: ReturnType<typeof memoryStepActions> } {
  return { job: newJob(sites, INPUTS, { crm: 'ada@example.com' }), actions: memoryStepActions() };
}

/** One attempt of the step as RunStep makes it, with its record kept across attempts; `crashAt` throws at a fault point. */
async function attempt(
  job: Job<CrmContactAgentInputs>,
  actions: ReturnType<typeof memoryStepActions>,
  crashAt?: { point: string; action: number },
): Promise<{ ctx: StepContext<CrmContactAgentInputs>; crashed: boolean }> {
  const ctx: StepContext<CrmContactAgentInputs> = {
    ...contextFor(job, step),
    actions,
    faultPoint: async (point, at) => {
      if (crashAt && point === crashAt.point && at?.action === crashAt.action) throw new Crash(point);
    },
  };
  expect(await ready(step, page, ctx)).toEqual({ ok: true });
  try {
    await step.run(page, ctx);
    return { ctx, crashed: false };
  } catch (err) {
    if (err instanceof Crash) return { ctx, crashed: true };
    throw err;
  }
}

const chosen = (actions: ReturnType<typeof memoryStepActions>) =>
  actions.entries.filter((e) => e.type === 'action-chosen').map((e) => e.detail.describe);

describe('Agent step: crm-contact-agent@1 update-contact', () => {
  it('fills and submits the form from its goal, each action recorded before it ran', async () => {
    expect(crmContactAgentPlaybook.steps.map((s) => s.id)).toEqual(['crm-sign-in', 'update-contact']);
    const { job, actions } = jobAndRecord();
    const { ctx } = await attempt(job, actions);
    expect(chosen(actions)).toEqual([
      'fill textbox "Contact name" = "Mei Chen-Ward"',
      'fill textbox "Phone" = "+44 117 496 0999"',
      'click button "Save record"',
      'done: the form was filled and submitted',
    ]);
    expect(policy.calls).toBe(4);
    expect(await step.verify(page, ctx)).toEqual({
      customerId: 'C-1003',
      contact: 'Mei Chen-Ward',
      phone: '+44 117 496 0999',
    });
    expect((await crm.writes()).count).toBe(1);
    const first = actions.entries[0]?.detail;
    expect(first).toMatchObject({ n: 1, model: 'local', usage: { input: 0, output: 0 } });
    expect(JSON.stringify(first?.seen)).toContain('textbox \\"Contact name');
  });

  it.each([1, 2, 3, 4])(
    'killed after recorded action %i, resumes with no model call for the recorded actions and one write',
    async (n) => {
      const { job, actions } = jobAndRecord();
      const first = await attempt(job, actions, { point: 'action-recorded', action: n });
      expect(first.crashed).toBe(true);
      expect(policy.calls).toBe(n);
      const recorded = chosen(actions).length;
      // The engine probes a write whose intent is open before acting again: absent while the
      // submitting click (action 3) has not run, done once it has (killed after done was recorded).
      const probe = await step.probe?.(page, first.ctx);
      expect(probe?.status).toBe(n === 4 ? 'done' : 'absent');
      if (n < 4) {
        expect(probe).toEqual({ status: 'absent' });
        const calls = policy.calls;
        const again = await attempt(job, actions);
        expect(again.crashed).toBe(false);
        // Only actions past the record cost a decision.
        expect(policy.calls - calls).toBe(4 - recorded);
        expect(await step.verify(page, again.ctx)).not.toBeNull();
      }
      expect(chosen(actions)).toHaveLength(4);
      expect((await crm.writes()).count).toBe(1);
    },
  );

  it('killed after the submitting click ran, the probe finds the write done: nothing is replayed', async () => {
    const { job, actions } = jobAndRecord();
    const first = await attempt(job, actions, { point: 'action-executed', action: 3 });
    expect(first.crashed).toBe(true);
    expect(await step.probe?.(page, first.ctx)).toMatchObject({ status: 'done' });
    expect((await crm.writes()).count).toBe(1);
    expect(policy.calls).toBe(3);
  });

  it('heals a target renamed between attempts with one model call and an action-healed entry', async () => {
    const { job, actions } = jobAndRecord();
    expect((await attempt(job, actions, { point: 'action-recorded', action: 3 })).crashed).toBe(true);
    await crm.setFaults({ changedLayout: true }); // the save button is now "Store changes"
    const calls = policy.calls;
    const again = await attempt(job, actions);
    expect(again.crashed).toBe(false);
    const healed = actions.entries.filter((e) => e.type === 'action-healed');
    expect(healed).toHaveLength(1);
    expect(healed[0]?.detail).toMatchObject({ n: 3, describe: 'click button "Store changes"' });
    expect(healed[0]?.detail.replaces).toEqual({
      name: 'click',
      target: { role: 'button', name: 'Save record' },
    });
    // One call to heal the click, one for done.
    expect(policy.calls - calls).toBe(2);
    expect((await crm.writes()).count).toBe(1);
  });

  it("refuses a goto off the job's domains, records it, and goes on", async () => {
    policy = new CountingPolicy((_o, call) =>
      call === 1
        ? {
            action: { name: 'goto', url: 'https://attacker.example/steal' },
            model: 'local',
            tokens: { input: 0, output: 0 },
          }
        : undefined,
    );
    const { job, actions } = jobAndRecord();
    const { ctx } = await attempt(job, actions);
    const refused = actions.entries.filter((e) => e.type === 'action-refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]?.detail).toMatchObject({
      n: 1,
      action: { name: 'goto', url: 'https://attacker.example/steal' },
    });
    expect(new URL(page.url()).host).toBe(new URL(sites.crm.baseUrl).host);
    expect(await step.verify(page, ctx)).not.toBeNull();
    expect((await crm.writes()).count).toBe(1);
  });
});

describe('Agent step: ask_person', () => {
  it("stops the step with the model's question, and gives the answer to the model when it runs again", async () => {
    const seenAnswers: string[][] = [];
    policy = new CountingPolicy((o, call) => {
      seenAnswers.push([...o.answers]);
      return call === 1
        ? {
            action: { name: 'ask_person', question: 'Which phone?' },
            model: 'local',
            tokens: { input: 0, output: 0 },
          }
        : undefined;
    });
    const { job, actions } = jobAndRecord();
    const ctx: StepContext<CrmContactAgentInputs> = { ...contextFor(job, step), actions };
    expect(await ready(step, page, ctx)).toEqual({ ok: true });
    const asked = await step.run(page, ctx).catch((e: unknown) => e);
    expect(asked).toBeInstanceOf(PersonAskedError);
    expect((asked as PersonAskedError).question).toBe('Which phone?');
    // A person answers (the engine adds the review's comment to the step's record).
    actions.entries.push({ type: 'answer', detail: { answer: 'the mobile' }, at: 't' });
    await step.run(page, ctx);
    // The question was not asked again: the replay met its answer; every later call saw it.
    expect(policy.calls).toBe(5);
    expect(seenAnswers.slice(1).every((a) => a.join() === 'the mobile')).toBe(true);
    expect((await crm.writes()).count).toBe(1);
  });
});

describe('Agent step: no secret reaches the model', () => {
  const SECRET_PHONE = '+44 117 496 0777';
  // A step whose phone is a secret input: the model sees only {{secret:phone}}.
  const secretStep = agentStep<CrmContactAgentInputs>({
    id: 'update-contact',
    title: 'Update the contact with a secret phone',
    kind: 'write',
    app: 'crm',
    application: crmApplication,
    start: (ctx) => `/customers/${ctx.inputs.customerId}/edit`,
    goal: 'Set the contact to {{inputs.contactName}} and the phone to {{secret:phone}}, then save.',
    fields: { 'Contact name': '{{inputs.contactName}}', Phone: '{{secret:phone}}' },
    secrets: async () => ({ phone: SECRET_PHONE }),
    model: 'anthropic:claude-haiku-4-5',
    verify: async (page) => (/[?&]saved=/.test(page.url()) ? { saved: true } : null),
  });

  it('types the secret from a placeholder; no request, entry or log holds it or the password', async () => {
    const server = await startModelServer();
    try {
      configureAgentModels({
        allowed: ['anthropic:claude-haiku-4-5'],
        localLatencyMs: 0,
        anthropic: { apiKey: 'sk-ant-test', baseURL: `${server.url}/v1` },
      });
      server.script([
        WIRE.anthropic.call('fill', {
          target: { role: 'textbox', name: 'Contact name' },
          value: 'Mei Chen-Ward',
        }),
        WIRE.anthropic.call('fill', {
          target: { role: 'textbox', name: 'Phone' },
          value: '{{secret:phone}}',
        }),
        WIRE.anthropic.call('click', { target: { role: 'button', name: 'Save record' } }),
        WIRE.anthropic.call('done', { summary: 'saved' }),
      ]);
      const job = newJob(sites, INPUTS, { crm: 'ada@example.com' });
      const actions = memoryStepActions();
      const ctx: StepContext<CrmContactAgentInputs> = { ...contextFor(job, secretStep), actions };
      expect(await ready(secretStep, page, ctx)).toEqual({ ok: true });
      await secretStep.run(page, ctx);
      expect(await secretStep.verify(page, ctx)).toEqual({ saved: true });
      // The site got the real value...
      expect((await page.getByTestId('record-phone').textContent())?.trim()).toBe(SECRET_PHONE);
      expect(server.requests).toHaveLength(4);
      // ...the model saw the placeholder where the page showed it (the last request sees the saved record).
      expect(server.requests[3]?.rawBody).toContain('{{secret:phone}}');
      const password = demoCredentials('crm', 'ada@example.com').password;
      const everything = [
        ...server.requests.map((r) => r.rawBody),
        JSON.stringify(actions.entries),
        JSON.stringify(job.log),
      ].join('\n');
      expect(everything).not.toContain(SECRET_PHONE);
      expect(everything).not.toContain(password);
      expect(actions.entries.map((e) => e.detail.usage)).toEqual(Array(4).fill({ input: 321, output: 17 }));
    } finally {
      await server.close();
    }
  });
});
