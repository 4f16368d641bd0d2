import { describe, expect, it } from 'vitest';
import { eventOf, waitPayload } from '../../../lambdas/lib/notifications/deliver.ts';

describe('Function: waitPayload (a drift check that turned red)', () => {
  it('is a playbook.check.failed event linking to the playbook health page, never to a job wait', () => {
    const notice = {
      tenantId: 't1',
      jobId: 'check_1',
      kind: 'check',
      step: 'add-item-a',
      playbook: 'checkout@1',
      finding: 'layout-changed',
      detail: 'the Add button is not on the page',
    };
    expect(eventOf(notice)).toBe('playbook.check.failed');
    expect(eventOf({ kind: 'approval' })).toBe('job.waiting');
    const payload = waitPayload(notice, 'https://belay.example/', 'dlv_1', new Date('2026-12-05T00:00:00Z'));
    expect(payload).toMatchObject({
      type: 'playbook.check.failed',
      id: 'dlv_1',
      check: { playbook: 'checkout@1', step: 'add-item-a', finding: 'layout-changed' },
      links: {
        console: 'https://belay.example/console/playbooks/checkout%401',
        api: 'https://belay.example/playbooks/checkout%401/checks',
      },
    });
    expect(String(payload.text)).toContain(
      'the drift check of checkout@1 found step add-item-a not as the playbook expects',
    );
    expect(JSON.stringify(payload)).not.toContain('liveView');
  });
});
