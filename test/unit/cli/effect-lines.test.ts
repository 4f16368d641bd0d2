import { describe, expect, it } from 'vitest';
import { effectLines } from '../../../tools/cli/belay/jobs.ts';

describe('Function: effectLines', () => {
  it("prints the fields, then an agent step's planned actions numbered, the last one the commit", () => {
    const text = effectLines({
      hash: 'a'.repeat(64),
      fields: [{ name: 'Payee (payee)', value: 'Grace Hopper' }],
      actions: ['fill textbox "Payee" = "{{inputs.payee}}"', 'click button "Send"'],
    });
    expect(text).toContain(`would submit (effect ${'a'.repeat(16)})`);
    expect(text).toMatch(/Payee \(payee\)\s+Grace Hopper/);
    expect(text).toContain(
      'planned actions (the last one commits):\n  1. fill textbox "Payee" = "{{inputs.payee}}"\n  2. click button "Send"',
    );
  });

  it('lists a changed action beside a changed field, and no plan for a scripted step', () => {
    const text = effectLines({
      hash: 'b'.repeat(64),
      fields: [{ name: 'Amount', value: '120.00' }],
      changes: [
        { name: 'Amount', before: '100.00', after: '120.00' },
        { name: 'action 3', action: true, before: 'click button "Send"', after: 'click button "Send now"' },
      ],
      approvedBy: 'blk_person',
    });
    expect(text).toMatch(/changed since approved by blk_person/);
    expect(text).toMatch(/action 3\s+click button "Send"\s+click button "Send now"/);
    expect(text).not.toContain('planned actions');
  });
});
