import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Where the kernel picks ports for `listen(0)` and outgoing connections (Linux's default if unreadable). */
export function ephemeralPortRange(file = '/proc/sys/net/ipv4/ip_local_port_range'): [number, number] {
  try {
    const [low, high] = readFileSync(file, 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && (low as number) > 0)
      return [low as number, high as number];
  } catch {
    // not Linux, or not readable: assume the default
  }
  return [32768, 60999];
}

/** Lowest port handed out: above the usual fixed service ports. */
const FIRST_PORT = 20_000;
const ATTEMPTS_PER_PORT = 50;

/** Binds 127.0.0.1:`port` and closes it again: whether the port is free now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/**
 * `count` distinct free loopback ports for a stack that must come back on the same ports after
 * a crash. They are drawn below the kernel's ephemeral range, so no other process's `listen(0)`
 * or outgoing connection can take one between this check and the stack's bind, or while the
 * stack is down for a restart. Falls back to ephemeral ports where there is no room below.
 */
export async function freePorts(count: number, random: () => number = Math.random): Promise<number[]> {
  const [ephemeralLow] = ephemeralPortRange();
  const span = ephemeralLow - FIRST_PORT;
  const ports: number[] = [];
  for (
    let attempt = 0;
    ports.length < count && span > count && attempt < count * ATTEMPTS_PER_PORT;
    attempt++
  ) {
    const port = FIRST_PORT + Math.floor(random() * span);
    if (!ports.includes(port) && (await bindable(port))) ports.push(port);
  }
  while (ports.length < count) ports.push(await ephemeralPort());
  return ports;
}

function ephemeralPort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
