import { describe, expect, it } from 'vitest';
import type { Io } from '../../../tools/cli/belay/io.ts';
import { runBelay } from '../../../tools/cli/belay.ts';

function io(): Io & { text(): string } {
  const lines: string[] = [];
  return {
    out: (t) => lines.push(t),
    err: (t) => lines.push(t),
    isTTY: false,
    stdin: async () => '',
    text: () => lines.join('\n'),
  };
}

const COMMANDS = [
  ['jobs', 'submit'],
  ['jobs', 'list'],
  ['jobs', 'get'],
  ['jobs', 'watch'],
  ['jobs', 'ledger'],
  ['approve'],
  ['reject'],
  ['mfa'],
  ['cancel'],
  ['playbooks', 'list'],
  ['accounts', 'list'],
  ['accounts', 'connect'],
  ['keys', 'create'],
  ['cost'],
  ['webhooks', 'add'],
  ['login'],
] as const;

describe('Function: runBelay', () => {
  it.each(COMMANDS.map((c) => c.join(' ')))(
    '%s --help says what the command does and exits 0',
    async (line) => {
      const out = io();
      expect(await runBelay([...line.split(' '), '--help'], out, {})).toBe(0);
      expect(out.text()).toMatch(/^Usage: belay /m);
      expect(out.text().split('\n').length).toBeGreaterThan(3);
    },
  );

  it('an unknown command or a missing argument is a usage error (2) that says so', async () => {
    const out = io();
    expect(await runBelay(['jobs', 'get'], out, {})).toBe(2);
    expect(out.text()).toContain("missing required argument 'id'");
    expect(await runBelay(['nope'], io(), {})).toBe(2);
  });

  it('with no URL anywhere it says how to give one (exit 3)', async () => {
    const out = io();
    expect(
      await runBelay(['jobs', 'list'], out, {
        BELAY_LOCAL_STATE: '/nonexistent',
        XDG_CONFIG_HOME: '/nonexistent',
      }),
    ).toBe(3);
    expect(out.text()).toContain('set BELAY_URL');
  });
});
