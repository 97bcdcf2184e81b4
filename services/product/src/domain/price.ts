import { AppError } from '@licensing/runtime';
import {
  PRICE_AMOUNT_MAX,
  PRICE_INTERVAL_COUNT_MAX,
  PRICE_TRIAL_DAYS_MAX,
  isOneOf,
  priceIntervals,
  type Price,
  type PriceInterval,
} from '@licensing/proto';

// Prices in minor units of an ISO 4217 currency (what every payment provider takes).
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export interface StoredPrice {
  amount: number;
  currency: string;
  /** month | year: a subscription; absent (prices stored before) or null: one-time. */
  interval?: PriceInterval | null;
  /** 1..12 with an interval. */
  interval_count?: number;
  /** 0..365 with an interval. */
  trial_days?: number;
}

export function checkPrice(p: Price): StoredPrice {
  if (!Number.isInteger(p.amount) || p.amount < 1 || p.amount > PRICE_AMOUNT_MAX)
    throw AppError.invalid(
      'price.amount',
      `price.amount must be a whole number of minor units (cents) from 1 to ${PRICE_AMOUNT_MAX}`,
    );
  const currency = p.currency.toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency) || !CURRENCIES.has(currency))
    throw AppError.invalid('price.currency', 'price.currency must be an ISO 4217 code such as EUR or USD');
  const interval = p.interval || null;
  if (interval !== null && !isOneOf(priceIntervals, interval))
    throw AppError.invalid('price.interval', `price.interval must be one of ${priceIntervals.join(', ')}, or null`);
  if (interval === null) {
    // A one-time price has no period and no trial: a mistake to send them, not something to drop silently.
    if (p.interval_count) throw AppError.invalid('price.interval_count', 'price.interval_count needs price.interval');
    if (p.trial_days) throw AppError.invalid('price.trial_days', 'price.trial_days needs price.interval');
    return { amount: p.amount, currency };
  }
  const count = p.interval_count ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > PRICE_INTERVAL_COUNT_MAX)
    throw AppError.invalid(
      'price.interval_count',
      `price.interval_count must be a whole number from 1 to ${PRICE_INTERVAL_COUNT_MAX}`,
    );
  const trial = p.trial_days ?? 0;
  if (!Number.isInteger(trial) || trial < 0 || trial > PRICE_TRIAL_DAYS_MAX)
    throw AppError.invalid(
      'price.trial_days',
      `price.trial_days must be a whole number from 0 to ${PRICE_TRIAL_DAYS_MAX}`,
    );
  return { amount: p.amount, currency, interval, interval_count: count, trial_days: trial };
}

/** The contract's form of a stored price. */
export const priceToContract = (p: StoredPrice): Price =>
  p.interval
    ? {
        amount: p.amount,
        currency: p.currency,
        interval: p.interval,
        interval_count: p.interval_count ?? 1,
        trial_days: p.trial_days ?? 0,
      }
    : { amount: p.amount, currency: p.currency };
