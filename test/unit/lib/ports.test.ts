import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ephemeralPortRange, freePorts } from '../../../local/ports.ts';

const held: Server[] = [];
afterEach(async () => {
  await Promise.all(held.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const listen = (port: number): Promise<Server> =>
  new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => done(server));
  });

describe('Function: freePorts', () => {
  it('gives distinct bindable ports below the ephemeral range, which listen(0) never hands out', async () => {
    const [low] = ephemeralPortRange();
    const ports = await freePorts(6);
    expect(new Set(ports).size).toBe(6);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(low);
      held.push(await listen(port));
    }
    // What the kernel picks for listen(0) is in the ephemeral range.
    const any = await listen(0);
    held.push(any);
    const address = any.address();
    expect(typeof address === 'object' && address ? address.port : 0).toBeGreaterThanOrEqual(low);
  });

  it('skips a port that is taken', async () => {
    const [taken] = await freePorts(1);
    held.push(await listen(taken as number));
    // A "random" source that proposes the taken port first, then one just found free.
    const [free] = await freePorts(1);
    const [low] = ephemeralPortRange();
    const span = low - 20_000;
    const proposals = [(taken as number) - 20_000, (taken as number) - 20_000, (free as number) - 20_000];
    let i = 0;
    // (+0.5: the middle of each port's slot, whatever the rounding.)
    const ports = await freePorts(
      1,
      () => ((proposals[Math.min(i++, proposals.length - 1)] as number) + 0.5) / span,
    );
    expect(ports).toEqual([free]);
  });
});
