// How the portal shows a licence key before it is revealed: every group but the last as dots, so the
// customer can tell their keys apart and a glance over their shoulder cannot take one.

const DOT = '•';

/** "ABCDE-FGHIJ-…-VWXYZ" → "•••••-•••••-…-VWXYZ"; a key without groups keeps its last five characters. */
export function maskKey(key: string): string {
  const groups = key.split('-');
  if (groups.length > 1) return [...groups.slice(0, -1).map((g) => DOT.repeat(g.length)), groups.at(-1)].join('-');
  return DOT.repeat(Math.max(0, key.length - 5)) + key.slice(-5);
}

/** The key's last group, for screen readers ("key ending VWXYZ"). */
export const keyEnding = (key: string): string => key.split('-').at(-1)!.slice(-5);
