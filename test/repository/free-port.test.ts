import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort } from '../../scripts/lib/net';

// Ports handed to servers that bind them later must never be ones the kernel can give to a
// connection or a port-0 listener meanwhile (CI once failed on EADDRINUSE that way).
const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

it('picks distinct, bindable ports below the kernel ephemeral range', async () => {
  const ports = [await freePort(), await freePort(), await freePort()];
  expect(new Set(ports).size).toBe(3);
  for (const port of ports) {
    expect(port).toBeLessThan(ephemeralStart);
    expect(port).toBeGreaterThanOrEqual(1024);
  }
});

it('skips a port something already listens on', async () => {
  const first = await freePort();
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(first + 1, '127.0.0.1', resolve));
  try {
    // first + 1 would be the next pick (unless the walk wraps round its slice); it is taken.
    const next = await freePort();
    expect(next).not.toBe(first + 1);
    expect(next).not.toBe(first);
  } finally {
    await new Promise((resolve) => holder.close(resolve));
  }
});
