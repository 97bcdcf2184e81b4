// The outbox's clearing write for FerretDB over PostgreSQL (see outbox.ts). FerretDB 1.x applies an
// update as read-modify-write of the whole document without isolation, so a clearing update sent
// through it could put back the document it read over a change the service made meanwhile, dropping
// that change and the event stored with it. This is one UPDATE statement instead: PostgreSQL locks each
// row and re-checks the condition on its newest version, so the events are removed from a document
// as it is at that moment, and only if it holds exactly those events. A service write that races it
// (FerretDB's read-modify-write) can at worst put an already published event back, which the relay
// then publishes again under the same Nats-Msg-Id (a duplicate JetStream drops) and clears again.
// One statement clears a whole batch of documents, each under its own condition: one write per
// batch, not per document.

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

export interface Sql {
  text: string;
  params: unknown[];
}

/** The published events to clear from one document. */
export interface Published {
  id: string;
  eventIds: string[];
}

/**
 * Removes `outbox` and `outbox_pending` (with their entries in FerretDB's schema header, `$s`) from
 * each document of `docs` whose outbox holds exactly its `eventIds`; changes no other document.
 * Answers the ids of the documents it cleared.
 */
export function clearOutboxSql(schema: string, table: string, docs: Published[]): Sql {
  // Keys compared in byte order on both sides ("C"), whatever the database's collation.
  const expected: Record<string, string[]> = {};
  for (const d of docs) expected[d.id] = [...new Set(d.eventIds)].sort();
  return {
    text: `UPDATE ${quote(schema)}.${quote(table)} SET _jsonb = jsonb_set(
        (_jsonb - 'outbox' - 'outbox_pending') #- '{$s,p,outbox}' #- '{$s,p,outbox_pending}',
        '{$s,$k}',
        (SELECT coalesce(jsonb_agg(k ORDER BY n), '[]'::jsonb)
           FROM jsonb_array_elements(_jsonb->'$s'->'$k') WITH ORDINALITY AS e(k, n)
          WHERE k NOT IN ('"outbox"'::jsonb, '"outbox_pending"'::jsonb)))
      WHERE _jsonb->'_id' = ANY($1::jsonb[])
        AND jsonb_typeof(_jsonb->'outbox') = 'object'
        AND (SELECT jsonb_agg(k ORDER BY k COLLATE "C") FROM jsonb_object_keys(_jsonb->'outbox') AS k)
            = $2::jsonb -> (_jsonb->>'_id')
      RETURNING _jsonb->>'_id' AS id`,
    // FerretDB stores a string _id as its JSON text (and indexes _jsonb->'_id').
    params: [Object.keys(expected).map((id) => JSON.stringify(id)), JSON.stringify(expected)],
  };
}

/**
 * The partial index the relay's scan reads (pendingIdsSql): the ids of the documents with
 * `outbox_pending`, in byte order. It holds only pending documents, so an idle scan reads an empty
 * index and a scan during a burst reads one page of it, never every pending document.
 */
export function pendingIndexSql(schema: string, table: string, name: string): string {
  return `CREATE INDEX IF NOT EXISTS ${quote(name)} ON ${quote(schema)}.${quote(table)}
    (((_jsonb->>'_id') COLLATE "C")) WHERE (_jsonb->'outbox_pending') = 'true'::jsonb`;
}

/** The ids of up to `limit` documents with `outbox_pending` after `after`, in byte order (pendingIndexSql's index). */
export function pendingIdsSql(schema: string, table: string, after: string, limit: number): Sql {
  return {
    // The predicate is the index's own, written out, so the planner can use the partial index.
    text: `SELECT _jsonb->>'_id' AS id FROM ${quote(schema)}.${quote(table)}
      WHERE (_jsonb->'outbox_pending') = 'true'::jsonb AND ((_jsonb->>'_id') COLLATE "C") > $1
      ORDER BY ((_jsonb->>'_id') COLLATE "C") LIMIT $2`,
    params: [after, limit],
  };
}
