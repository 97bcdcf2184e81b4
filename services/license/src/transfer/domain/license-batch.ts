import { AppError, checkEmail, type FieldError } from '@licensing/runtime';
import { entitlementsProblem, type LicenseBatchItemStatus } from '@licensing/proto';
import { mergeMetadata } from '../../domain/metadata';

// A batch of licences (POST /api/v1/licenses/batch): every item is checked before anything is stored,
// and the answer names each bad item by its index; then a job issues them. Pure rules here.

export const BATCH_MAX_ITEMS = 1000;
/** At most this many item problems are listed in one answer (the first ones). */
const MAX_LISTED_PROBLEMS = 50;

export interface BatchItemInput {
  customer_email: string;
  metadata: Record<string, string>;
  entitlements: string[];
  send_email: boolean;
}

/** A checked item: its e-mail trimmed, its metadata and entitlements within the licence's limits. */
export type CheckedItem = BatchItemInput;

/** The problem of one item, with its field named `licenses[i].…`; undefined when it is fine. */
function itemProblem(item: BatchItemInput, i: number): { item: CheckedItem } | { problems: FieldError[] } {
  const at = `licenses[${i}]`;
  const problems: FieldError[] = [];
  let email = '';
  try {
    email = checkEmail(`${at}.customer_email`, item.customer_email ?? '');
  } catch (err) {
    problems.push(...fieldErrors(err, `${at}.customer_email`));
  }
  let metadata: Record<string, string> = {};
  try {
    metadata = mergeMetadata({}, item.metadata ?? {});
  } catch (err) {
    problems.push(...fieldErrors(err, 'metadata').map((e) => ({ ...e, field: `${at}.${e.field}` })));
  }
  const entitlements = item.entitlements ?? [];
  const bad = entitlements.length ? entitlementsProblem(`${at}.entitlements`, entitlements) : undefined;
  if (bad) problems.push(bad);
  if (problems.length) return { problems };
  return { item: { customer_email: email, metadata, entitlements: [...entitlements], send_email: !!item.send_email } };
}

function fieldErrors(err: unknown, field: string): FieldError[] {
  if (!(err instanceof AppError)) throw err;
  return err.fieldErrors.length ? err.fieldErrors : [{ field, message: err.message }];
}

/**
 * Every item checked, or one invalid_request listing the bad ones (`licenses[3].customer_email`, …):
 * a batch is stored whole or not at all.
 */
export function checkBatchItems(items: readonly BatchItemInput[]): CheckedItem[] {
  if (items.length === 0) throw AppError.invalid('licenses', 'licenses must hold at least one item');
  if (items.length > BATCH_MAX_ITEMS)
    throw AppError.invalid('licenses', `licenses may hold at most ${BATCH_MAX_ITEMS} items (got ${items.length})`);
  const checked: CheckedItem[] = [];
  const problems: FieldError[] = [];
  items.forEach((item, i) => {
    const out = itemProblem(item, i);
    if ('item' in out) checked.push(out.item);
    else problems.push(...out.problems);
  });
  if (problems.length) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
    throw new AppError(
      'invalid_request',
      problems.length === 1
        ? problems[0].message
        : `${problems.length} problems in licenses, the first: ${problems[0].message}`,
      listed,
    );
  }
  return checked;
}

/** What a batch's items add up to. */
export function batchCounts(items: readonly { status: LicenseBatchItemStatus }[]): {
  issued: number;
  failed: number;
  waiting: number;
} {
  let issued = 0;
  let failed = 0;
  for (const item of items) {
    if (item.status === 'issued') issued++;
    else if (item.status === 'failed') failed++;
  }
  return { issued, failed, waiting: items.length - issued - failed };
}

/** The part of a batch's request an Idempotency-Key compares: the product and the checked items. */
export const batchRequestOf = (productId: string, items: readonly CheckedItem[]) => ({
  product_id: productId,
  licenses: items,
});
