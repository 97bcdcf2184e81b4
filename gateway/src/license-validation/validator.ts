import {
  activationsMatter,
  effectiveStatus,
  judge,
  lapsed,
  seatFacts,
  nextVerdictChange,
  parseLicenseKey,
  seenByScope,
  verdictFields,
  type License,
  type ParsedKey,
  type ValidateLicenseResponse,
  type Verdict,
} from '@licensing/proto';
import type { Clock, Metrics } from '@licensing/runtime';
import type { Principal } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { AnswerCount, endOfSecond, SentAnswer } from './sent-answers';
import {
  cacheKey,
  cacheKeyOfDigest,
  toCachedAnswer,
  type CachedAnswer,
  type CachedLicense,
  type ValidationCache,
} from './cache';
import { ValidationBatcher } from './lookup-batch';
import type { ValidationTally } from './tally';

// How a validation flows through this folder (the one picture of it; the other files point here):
//
//  GET /api/v1/licenses/validate (and /v1/…)           POST /api/v1/keys/validate
//    │                                                   │
//    ▼ fast-path.ts: answers without Express when it can │
//    │   fast-path-request.ts reads the request, or      │
//    │   leaves it to Express; then the API key must be  │
//    │   in the auth cache (auth/) and the rate limits   │
//    │   decidable in memory (rate-limits/)              │
//    │        └── else: Express (auth, limits, scope) ─▶ routes/licenses.ts
//    ▼                                                   │
//  validator.ts (this file): one LicenseValidator for both, the same rules (proto/rules) as the
//    │   licence service's; local() answers a malformed key at once and looks a licence up in
//    ▼
//  cache.ts (ValidationCache): the facts of licences (and unknown keys) per account, exact through
//    │   license.* and product.updated events, bounded in size and age (docs/architecture.md,
//    │   "A map of the caches")
//    ├─ hit ──▶ sent-answers.ts: the answer already sent this second to the same request, else
//    │          judged now (judge()) and kept on the entry until the second ends
//    └─ miss ─▶ remote(): lookup-batch.ts (ValidationBatcher: the look-ups of one event-loop turn in
//               one ValidateLicenses call) ─▶ licence service ─▶ verdict + the facts behind it,
//               which fill cache.ts
//    ▼
//  validation-json.ts: the REST body of the answer, the same from the fast path and Express
//    ▼
//  tally.ts (ValidationTally): what was answered here counted per account, hour, answer code,
//      licence and machine, and sent to the licence service every few seconds in calls that
//      tally-chunks.ts cuts to size (the licence service counts what it answers itself)

export interface ValidationInput {
  key: string;
  productId: string;
  fingerprint: string;
  /** Entitlement codes the app needs (POST /keys/validate only; checked by its request shape). */
  entitlements?: readonly string[];
}

export type ValidationAnswer = Omit<ValidateLicenseResponse, 'facts'>;

/** A validation this gateway can answer without asking anyone (a malformed key, or a cache hit). */
export interface LocalValidation {
  parsed: ReturnType<typeof parseLicenseKey>;
  cached: CachedAnswer | null;
  productId: string;
  fingerprint: string;
  entitlements: readonly string[];
}

/**
 * Both validation endpoints: a malformed key is answered here, a known licence
 * from the cache, anything else by the licence service (whose facts then fill
 * the cache). The same rules (proto/rules) judge in both places.
 */
export class LicenseValidator {
  private readonly cacheResults;
  private readonly hits;
  private readonly byCode;
  /** Look-ups that meet in one turn of the event loop go to the licence service in one call. */
  private readonly service: ValidationBatcher;
  /**
   * The look-up on its way for each cache key: a request that misses meanwhile waits for it and then
   * answers from what it put in the cache, instead of asking too. When a licence's entry ends (its
   * TTL, an eviction), every connection validating it misses at once: one call instead of one each.
   */
  private readonly asking = new Map<string, Promise<unknown>>();

  constructor(
    clients: Clients,
    private readonly cache: ValidationCache,
    private readonly tally: ValidationTally,
    private readonly clock: Clock,
    metrics: Metrics,
  ) {
    this.service = new ValidationBatcher(clients.licenses);
    this.cacheResults = metrics.counterSeries('licensing_validation_cache_total', ['result']);
    this.hits = this.cacheResults('hit');
    this.byCode = metrics.counterSeries('licensing_validations_total', ['code']);
  }

  validate(p: Principal, input: ValidationInput): ValidationAnswer | Promise<ValidationAnswer> {
    if (!p.accountId) return this.unknownLicense(input);
    const local = this.local(p, input);
    return local ? this.answer(p, local) : this.remote(p, input);
  }

  /**
   * A licence key no licence has, sent as its own "License" credential (no account to ask in or to
   * count for): judged here as the service judges a key it does not find (not_found).
   */
  unknownLicense(input: ValidationInput): ValidationAnswer {
    const verdict = judge(
      parseLicenseKey(input.key),
      null,
      { accountId: '', productId: input.productId, fingerprint: input.fingerprint.trim().slice(0, 200) },
      { fingerprintActive: false, count: 0 },
      this.clock.now(),
    );
    return { ...verdictFields(verdict), license: undefined };
  }

  /** A well-formed key this gateway does not know (local() said undefined): the licence service answers, and fills the cache. */
  async remote(p: Principal, input: ValidationInput): Promise<ValidationAnswer> {
    const parsed = parseLicenseKey(input.key) as { ok: true; key: string };
    const fingerprint = input.fingerprint.trim().slice(0, 200);
    const key = cacheKey(p.accountId, parsed.key);
    if (!this.cache.usable) {
      this.cacheResults('bypass').inc();
      const request = {
        account_id: p.accountId,
        key: parsed.key,
        product_id: input.productId,
        fingerprint,
        entitlements: [...(input.entitlements ?? [])],
        key_scope: p.scope,
        want_facts: false,
        from_store: this.fromStore(p, key, input.productId),
        already_counted: false,
      };
      const answer = await this.service.validate(request);
      return this.staleProduct(p, request, answer.license?.product_id)
        ? this.service.validate({ ...request, from_store: true, already_counted: true })
        : answer;
    }
    const pending = this.asking.get(key);
    if (pending) {
      await pending.catch(() => undefined); // its failure is its caller's; this one asks for itself below
      const local = this.local(p, input);
      if (local) return this.answer(p, local); // counted as a hit, as any answer from the cache
    }
    this.cacheResults('miss').inc();
    const asked = this.ask(p, key, parsed.key, input.productId, fingerprint, input.entitlements ?? []);
    this.asking.set(key, asked);
    try {
      return await asked;
    } finally {
      if (this.asking.get(key) === asked) this.asking.delete(key);
    }
  }

  /** After this gateway changed a licence (or created one): its next answer must not come from before the change. */
  changed(p: Principal, key: string): void {
    const parsed = parseLicenseKey(key);
    if (parsed.ok) this.cache.forget(p.accountId, parsed.key);
  }

  /** After this gateway changed a product. */
  productChanged(p: Principal, productId: string): void {
    this.cache.forgetProduct(p.accountId, productId);
  }

  /**
   * What can be answered from here, looked up without counting anything yet; undefined = ask the licence service.
   * `known`: input.key already parsed, with its canonical key's digest (the fast path has them from a
   * licence credential naming itself), so neither is worked out twice.
   */
  local(
    p: Principal,
    input: ValidationInput,
    known?: { parsed: ParsedKey; digest: string },
  ): LocalValidation | undefined {
    const parsed = known?.parsed ?? parseLicenseKey(input.key);
    const fingerprint = input.fingerprint.trim().slice(0, 200);
    const entitlements = input.entitlements ?? [];
    if (!parsed.ok) return { parsed, cached: null, productId: input.productId, fingerprint, entitlements };
    const cached = this.cache.get(
      known ? cacheKeyOfDigest(p.accountId, known.digest) : cacheKey(p.accountId, parsed.key),
    );
    if (!cached) return undefined;
    // Our copy says this machine's floating seat lapsed: a heartbeat may have renewed it since (no event
    // for that, a lease only grows), so the licence service answers, and its facts replace the copy.
    if (cached.found && lapsed(cached.leases.get(fingerprint), this.clock.now().getTime())) return undefined;
    return { parsed, cached, productId: input.productId, fingerprint, entitlements };
  }

  private async ask(
    p: Principal,
    key: string,
    licenseKey: string,
    productId: string,
    fingerprint: string,
    entitlements: readonly string[],
  ): Promise<ValidationAnswer> {
    const since = this.cache.begin(key);
    const request = {
      account_id: p.accountId,
      key: licenseKey,
      product_id: productId,
      fingerprint,
      entitlements: [...entitlements],
      key_scope: p.scope,
      want_facts: true,
      from_store: this.fromStore(p, key, productId),
      already_counted: false,
    };
    let reply = await this.service.validate(request);
    if (this.staleProduct(p, request, reply.facts?.license?.product_id))
      reply = await this.service.validate({ ...request, from_store: true, already_counted: true });
    const { facts, ...answer } = reply;
    const cached = facts && toCachedAnswer(facts);
    const remembered = facts?.remembered_since ? Date.parse(facts.remembered_since) : Number.NaN;
    if (cached) this.cache.set(key, cached, since, Number.isNaN(remembered) ? undefined : remembered);
    return answer;
  }

  /**
   * Whether the licence service is asked to read the store: this gateway evicted the key lately, or the
   * product the request names (a licence's entitlements are its product's current ones).
   */
  private fromStore(p: Principal, key: string, productId: string): boolean {
    return this.cache.evictedLately(key) || this.cache.productEvictedLately(p.accountId, productId);
  }

  /**
   * An answer that may predate a product change this gateway heard of lately: the request named no
   * product (or another), and the licence's own was evicted within RECENT_EVICTION_MS. Asked again
   * from the store; rare (a product changed seconds ago), and never for a licence of another product.
   */
  private staleProduct(p: Principal, request: { from_store: boolean }, licenceProductId: string | undefined): boolean {
    return !request.from_store && !!licenceProductId && this.cache.productEvictedLately(p.accountId, licenceProductId);
  }

  /** Judged here, from the cache (or without a licence, for a malformed key), exactly as the service would; counted. */
  answer(p: Principal, local: LocalValidation): ValidationAnswer {
    const now = this.clock.now();
    const { verdict, found, answer } = this.judged(p, local, now);
    this.countOf(p, local, verdict, found, now).add(now.getTime());
    return answer;
  }

  /**
   * The answer to what local() found as sent (`serialise`d, always the same function: the GET route's
   * JSON), counted as answer() counts: the cache entry's answer of this second when it answers the
   * same request (sent-answers.ts), else judged now and kept on the entry.
   */
  answerSent(p: Principal, local: LocalValidation, serialise: (answer: ValidationAnswer) => string): SentAnswer {
    const now = this.clock.now();
    const nowMs = now.getTime();
    // A request naming entitlements is judged afresh every time: the answer kept is for none asked.
    const entry = local.entitlements.length ? null : local.cached;
    let sent = entry?.sent;
    if (!sent?.answers(p.scope, local.productId, local.fingerprint, nowMs)) {
      const { verdict, found, answer } = this.judged(p, local, now);
      const until = found ? Math.min(endOfSecond(nowMs), nextVerdictChange(found.facts, now)) : endOfSecond(nowMs);
      sent = new SentAnswer(
        serialise(answer),
        p.scope,
        local.productId,
        local.fingerprint,
        nowMs,
        until,
        this.countOf(p, local, verdict, found, now),
      );
      if (entry) entry.sent = sent;
    }
    sent.counts.add(nowMs);
    return sent;
  }

  /** What answering this look-up with this verdict counts (see AnswerCount). */
  private countOf(
    p: Principal,
    local: LocalValidation,
    verdict: Verdict,
    found: CachedLicense | null,
    now: Date,
  ): AnswerCount {
    const licenseId = verdict.visible && found ? found.license.id : '';
    return new AnswerCount(
      this.tally.cell(p.accountId, verdict.code, verdict.valid, now, licenseId, local.fingerprint),
      this.byCode(verdict.code),
      local.cached ? this.hits : undefined,
    );
  }

  /** The verdict on a local look-up at `now` and the answer it gives, nothing counted. */
  private judged(p: Principal, { parsed, cached, productId, fingerprint, entitlements }: LocalValidation, now: Date) {
    const found = cached?.found ? cached : null;
    const activation =
      found && activationsMatter(found.facts.policy)
        ? found.leases.size
          ? seatFacts(found.fingerprints, found.leases, fingerprint, now.getTime())
          : { fingerprintActive: !!fingerprint && found.fingerprints.has(fingerprint), count: found.activationCount }
        : { fingerprintActive: false, count: 0 };
    const verdict: Verdict = judge(
      parsed,
      found?.facts ?? null,
      { accountId: p.accountId, productId, fingerprint, entitlements },
      activation,
      now,
    );
    const answer: ValidationAnswer = {
      ...verdictFields(verdict),
      license: verdict.visible && found ? shown(found, now, p.scope) : undefined,
    };
    return { verdict, found, answer };
  }
}

/** The licence as the caller may see it now: derived status; e-mail and metadata only where the scope allows (seenByScope). */
function shown({ license, facts }: CachedLicense, now: Date, scope: string): License {
  return seenByScope({ ...license, status: effectiveStatus(facts, now) }, scope, facts.policy.validate_keys_see_email);
}
