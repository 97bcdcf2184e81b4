// Caps that hold under concurrency without transactions: a parent allowed N
// children (a licence's activations, an account's webhook endpoints) has slots
// "1".."N", and a child takes one by a unique (parent, slot_key) insert, so
// however many are created at once, at most N succeed (FerretDB enforces
// unique inserts, not conditional updates). A removed child frees its slot by
// changing its slot_key to a non-numeric one. Which free slot to try is chosen
// here, from the slots known to be taken, at random so that concurrent
// creations rarely pick the same one; stores retry a bounded number of times.

/** Rounds of "read taken slots, insert into a free one" before answering that the parent is contended. */
export const SLOT_ROUNDS = 4;

/**
 * Store attempts of one creation that lost every slot race of an attempt (many children of one parent
 * made at once: an office's machines starting together), each after a short random pause that spreads
 * the racers apart, before the caller is told to retry. Each attempt is SLOT_ROUNDS bounded rounds.
 */
export const CONTENDED_ATTEMPTS = 4;
const CONTENDED_PAUSE_MS = 20;

/** Runs `attempt` again after a short random pause while it answers 'contended', at most CONTENDED_ATTEMPTS times. */
export async function untilUncontended<T>(attempt: () => Promise<T | 'contended'>): Promise<T | 'contended'> {
  for (let i = 1; ; i++) {
    const out = await attempt();
    if (out !== 'contended' || i >= CONTENDED_ATTEMPTS) return out;
    await new Promise((resolve) => setTimeout(resolve, Math.random() * CONTENDED_PAUSE_MS * i));
  }
}

/** A free slot ("1".."max") not in `taken`, or null when every slot is taken. */
export function chooseSlot(taken: ReadonlySet<string>, max: number, random: () => number = Math.random): string | null {
  const used = [...taken].filter((k) => /^\d+$/.test(k) && Number(k) >= 1 && Number(k) <= max).length;
  if (used >= max) return null;
  // Mostly free: a few random picks find a free slot without scanning.
  if (used <= max / 2) {
    for (let i = 0; i < 8; i++) {
      const k = String(1 + Math.floor(random() * max));
      if (!taken.has(k)) return k;
    }
  }
  // Mostly taken (so max ≤ 2 × taken): scan from a random start.
  const start = Math.floor(random() * max);
  for (let i = 0; i < max; i++) {
    const k = String(1 + ((start + i) % max));
    if (!taken.has(k)) return k;
  }
  return null;
}
