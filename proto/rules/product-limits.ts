// The limits of a product and its price, declared once for the gateway's request shapes, the product
// service's checks and an import's product rows (which the licence service checks before it creates them).

/** A product's name (required) has at most this many characters. */
export const PRODUCT_NAME_MAX_LENGTH = 200;
/** A product's description. */
export const PRODUCT_DESCRIPTION_MAX_LENGTH = 2000;

/** A price's amount, in the currency's minor unit (cents): from 1 to this. */
export const PRICE_AMOUNT_MAX = 99_999_999;
/** A recurring price bills every 1 to this many intervals. */
export const PRICE_INTERVAL_COUNT_MAX = 12;
/** The longest trial a recurring price may give, in days. */
export const PRICE_TRIAL_DAYS_MAX = 365;
