import { AppError } from '@licensing/runtime';
import type { Price } from '@licensing/proto';

// Prices in minor units of an ISO 4217 currency (what every payment provider takes).
export const AMOUNT_MAX = 99_999_999;
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export interface StoredPrice {
  amount: number;
  currency: string;
}

export function checkPrice(p: Price): StoredPrice {
  if (!Number.isInteger(p.amount) || p.amount < 1 || p.amount > AMOUNT_MAX)
    throw AppError.invalid(
      'price.amount',
      `price.amount must be a whole number of minor units (cents) from 1 to ${AMOUNT_MAX}`,
    );
  const currency = p.currency.toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency) || !CURRENCIES.has(currency))
    throw AppError.invalid('price.currency', 'price.currency must be an ISO 4217 code such as EUR or USD');
  return { amount: p.amount, currency };
}
