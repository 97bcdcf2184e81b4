// The outbox's clearing write for FerretDB over PostgreSQL (see outbox.ts). FerretDB 1.x applies an
// update as read-modify-write of the whole document without isolation, so a clearing update sent
// through it could put back the document it read over a change the service made meanwhile, dropping
// that change and the event stored with it. This is one UPDATE statement instead: PostgreSQL locks the
// row and re-checks the condition on its newest version, so the events are removed from the document
// as it is at that moment, and only if it holds exactly those events. A service write that races it
// (FerretDB's read-modify-write) can at worst put an already published event back, which the relay
// then publishes again under the same Nats-Msg-Id (a duplicate JetStream drops) and clears again.

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

export interface Sql {
  text: string;
  params: unknown[];
}

/**
 * Removes `outbox` and `outbox_pending` from the document `id` (with their entries in FerretDB's
 * schema header, `$s`) if its outbox holds exactly `eventIds`; else changes nothing.
 */
export function clearOutboxSql(schema: string, table: string, id: string, eventIds: string[]): Sql {
  return {
    text: `UPDATE ${quote(schema)}.${quote(table)} SET _jsonb = jsonb_set(
        (_jsonb - 'outbox' - 'outbox_pending') #- '{$s,p,outbox}' #- '{$s,p,outbox_pending}',
        '{$s,$k}',
        (SELECT coalesce(jsonb_agg(k ORDER BY n), '[]'::jsonb)
           FROM jsonb_array_elements(_jsonb->'$s'->'$k') WITH ORDINALITY AS e(k, n)
          WHERE k NOT IN ('"outbox"'::jsonb, '"outbox_pending"'::jsonb)))
      WHERE _jsonb->'_id' = $1::jsonb
        AND jsonb_typeof(_jsonb->'outbox') = 'object'
        AND (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(_jsonb->'outbox') AS k) = $2::text[]`,
    // FerretDB stores a string _id as its JSON text (and indexes _jsonb->'_id').
    params: [JSON.stringify(id), [...eventIds].sort()],
  };
}
