import type { RecordValidationsRequest, ValidationSeen, ValidationTally as HourTally } from '@licensing/proto';

// Part of a validation's flow through license-validation/, drawn in validator.ts's header.

/**
 * What the gateway's validation tally keeps until the licence service has it, one entry per
 * thing counted: an account's hour, a licence's last validation, or a group of a licence's
 * recent validations (hour, answer code, machine). `id` is the entry's key in the tally.
 */
export type CountEntry =
  | { kind: 'tally'; id: string; tally: HourTally }
  | { kind: 'last_validated'; id: string; accountId: string; at: number }
  | { kind: 'seen'; id: string; group: Omit<ValidationSeen, 'last_at'> & { lastAtMs: number } };

export type CountKind = CountEntry['kind'];

/**
 * Bytes one entry takes in a RecordValidationsRequest, never less than its protobuf encoding: each
 * string's UTF-8 length plus 4 (tag and length), each number 11 (tag and the longest varint), each
 * message 4 more. Exact sizes would cost an encoding of every entry twice; this costs a few additions.
 */
export function encodedBytesAtMost(e: CountEntry): number {
  const str = (s: string) => Buffer.byteLength(s) + 4;
  const ISO = 24 + 4; // an RFC 3339 time as toISOString() writes it
  switch (e.kind) {
    case 'tally': {
      let n = 4 + str(e.tally.account_id) + ISO + 2 * 11;
      for (const code of Object.keys(e.tally.by_code)) n += 4 + str(code) + 11;
      return n;
    }
    case 'last_validated':
      return 4 + str(e.accountId) + str(e.id) + ISO;
    case 'seen': {
      const g = e.group;
      return 4 + str(g.account_id) + str(g.license_id) + ISO + str(g.code) + str(g.fingerprint) + 11 + ISO;
    }
  }
}

/** Entries in calls of at most `maxBytes` each (an entry larger than that alone goes alone), in their order. */
export function chunksOf(entries: CountEntry[], maxBytes: number): CountEntry[][] {
  const chunks: CountEntry[][] = [];
  let chunk: CountEntry[] = [];
  let bytes = 0;
  for (const e of entries) {
    const n = encodedBytesAtMost(e);
    if (chunk.length && bytes + n > maxBytes) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(e);
    bytes += n;
  }
  if (chunk.length) chunks.push(chunk);
  return chunks;
}

/** The call that carries these entries. */
export function requestOf(entries: CountEntry[]): RecordValidationsRequest {
  const req: RecordValidationsRequest = { tallies: [], last_validated: [], seen: [] };
  for (const e of entries) {
    if (e.kind === 'tally') req.tallies.push(e.tally);
    else if (e.kind === 'last_validated')
      req.last_validated.push({ account_id: e.accountId, license_id: e.id, at: new Date(e.at).toISOString() });
    else {
      const { lastAtMs, ...g } = e.group;
      req.seen.push({ ...g, last_at: new Date(lastAtMs).toISOString() });
    }
  }
  return req;
}
