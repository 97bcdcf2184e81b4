import type { Metadata, ServiceError } from '@grpc/grpc-js';
import type { ErrorDetail } from '@licensing/proto';

// The previous release's form of an error's detail: the code, the field errors (JSON) and the
// Retry-After in three trailers of their own, with no validation code. Upgrades are rolling (docs/
// operations.md: expand, then contract), so for one release a service sends them beside the typed
// ErrorDetail, for a gateway of the previous release, and a caller reads them when a service of the
// previous release sent no ErrorDetail. Remove this file in the release after.

const CODE_KEY = 'lk-error-code';
const FIELDS_KEY = 'lk-field-errors-bin';
const RETRY_AFTER_KEY = 'lk-retry-after';

/** Adds the previous release's trailers for `detail` to `metadata`. */
export function writePreviousTrailers(metadata: Metadata, detail: ErrorDetail): void {
  metadata.set(CODE_KEY, detail.code);
  if (detail.field_errors.length) metadata.set(FIELDS_KEY, Buffer.from(JSON.stringify(detail.field_errors), 'utf8'));
  if (detail.retry_after_s > 0) metadata.set(RETRY_AFTER_KEY, String(detail.retry_after_s));
}

/** The detail a service of the previous release sent in its trailers; undefined when it sent none. */
export function readPreviousTrailers(err: ServiceError): ErrorDetail | undefined {
  const code = err.metadata?.get(CODE_KEY)[0];
  if (typeof code !== 'string') return undefined;
  let fields: ErrorDetail['field_errors'] = [];
  const raw = err.metadata?.get(FIELDS_KEY)[0];
  if (Buffer.isBuffer(raw)) {
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      if (Array.isArray(parsed))
        fields = parsed.map((f) => ({ field: String(f?.field ?? ''), message: String(f?.message ?? '') }));
    } catch {
      fields = [];
    }
  }
  const retry = Number(err.metadata?.get(RETRY_AFTER_KEY)[0]);
  return {
    code,
    field_errors: fields,
    validation_code: '',
    retry_after_s: Number.isFinite(retry) && retry > 0 ? retry : 0,
  };
}
