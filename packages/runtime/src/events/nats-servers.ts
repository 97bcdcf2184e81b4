/**
 * The servers of a NATS_URL: one URL, or several separated by commas (the nodes of a cluster). nats.js
 * takes a list but never splits a string, so "nats://a:4222,nats://b:4222" given as it is would be one
 * unreachable address. With several, the client picks one at random and moves to another when it is
 * lost (and learns the rest of the cluster from the server it reached).
 */
export function natsServers(url: string): string[] {
  const servers = url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!servers.length) throw new Error('NATS_URL names no server');
  return servers;
}
