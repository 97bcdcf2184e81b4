import { segment } from '../arguments';
import type { Transport } from '../http';
import type { CustomerErasure } from '../types';

/** /api/v1/customers: the people your licences are for. */
export class Customers {
  constructor(private readonly http: Transport) {}

  /**
   * Erases a customer's e-mail from every service (licences, activation names, checkout sessions, the
   * mail log, webhook deliveries, portal sessions); the licences keep working under the placeholder
   * the answer names. Safe to repeat (a 503 asks you to): every step is idempotent.
   */
  async erase(email: string): Promise<CustomerErasure> {
    return this.http.request({
      method: 'DELETE',
      path: `/api/v1/customers/${segment(email, 'customer e-mail')}`,
      idempotent: true,
    });
  }
}
