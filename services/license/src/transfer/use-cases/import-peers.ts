import { AppError } from '@licensing/runtime';
import type { Product, WebhookEndpointWithSecret } from '@licensing/proto';
import { endpointForm, type ImportEndpoint, type ImportProduct } from '../domain/import-rows';
import type { ImportTally } from './import-tally';
import type { ImportDeps } from './imports';

// What an import run asks of the other services, over gRPC: the account's products (by id or by name,
// created when a name is new) and its webhook endpoints (an export's, created with a new secret). Each
// is read once per run and remembered for the rest of it.

/** A refusal of one row by another service (its product or webhook endpoint), not an outage. */
const isRowRefusal = (err: unknown): err is AppError =>
  err instanceof AppError &&
  (err.code === 'invalid_request' ||
    err.code === 'conflict' ||
    err.code === 'not_found' ||
    err.code === 'forbidden' ||
    err.code === 'payload_too_large');

/** Every item of a paginated gRPC list, 100 a call, in its order. */
async function everyItem<T>(
  list: (page: { limit: number; starting_after: string }) => Promise<{
    data: T[];
    page?: { has_more: boolean; next_cursor: string };
  }>,
): Promise<T[]> {
  const out: T[] = [];
  let after = '';
  for (;;) {
    const page = await list({ limit: 100, starting_after: after });
    out.push(...page.data);
    if (!page.page?.has_more || !page.page.next_cursor) return out;
    after = page.page.next_cursor;
  }
}

/** One run's view of the account's products and webhook endpoints. */
export class ImportPeers {
  private names?: Map<string, string>;
  private readonly productsById = new Map<string, Product | null>();
  /** The account's webhook endpoints by form, each matching one line at most (read once per run). */
  private endpointForms?: Map<string, string[]>;

  constructor(
    private readonly deps: Pick<ImportDeps, 'products' | 'webhooks'>,
    private readonly accountId: string,
    private readonly tally: ImportTally,
  ) {}

  /**
   * What `work` gives, or undefined once the row is rejected with the refusal of the service asked
   * (a product name or policy the product service refuses, its cap on products): a row it refuses
   * never stops the run. An outage throws on (the run stops, and is resumed from its checkpoint).
   */
  async refusedAs<T>(row: number, what: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (err) {
      if (!isRowRefusal(err)) throw err;
      this.tally.reject(row, `${what}: ${err.message}`);
      return undefined;
    }
  }

  /**
   * An export's webhook endpoint: skipped when the account has one of the same url, events, description
   * and enabled (running the file again adds nothing), else created with a new signing secret (the file
   * never holds one), which the import's notices say. A url or events the webhook service refuses
   * reject the row with its message.
   */
  async endpoint(row: number, e: ImportEndpoint): Promise<void> {
    const webhooks = this.deps.webhooks;
    if (!webhooks) {
      this.tally.reject(row, 'webhook_endpoint: webhook endpoints cannot be imported here');
      return;
    }
    if (!this.endpointForms) {
      const forms = new Map<string, string[]>();
      const all = await everyItem((page) => webhooks.listEndpoints({ account_id: this.accountId, page }));
      for (const x of all) {
        const form = endpointForm({ url: x.url, events: x.events, description: x.description, enabled: x.enabled });
        forms.set(form, [...(forms.get(form) ?? []), x.id]);
      }
      this.endpointForms = forms;
    }
    const same = this.endpointForms.get(endpointForm(e));
    if (same?.length) {
      same.shift();
      this.tally.skipped();
      return;
    }
    let made: WebhookEndpointWithSecret;
    try {
      made = await webhooks.createEndpoint({
        account_id: this.accountId,
        url: e.url,
        events: e.events,
        description: e.description,
        enabled: e.enabled,
      });
    } catch (err) {
      if (err instanceof AppError && (err.code === 'invalid_request' || err.code === 'conflict')) {
        this.tally.reject(row, `webhook_endpoint: ${err.message}`);
        return;
      }
      throw err; // the webhook service away: the run stops, and the job resumes from its checkpoint
    }
    const id = made.endpoint!.id;
    this.tally.imported();
    this.tally.notice(
      row,
      `webhook_endpoint: created as ${id} with a new signing secret (an export never holds one): POST /api/v1/webhooks/${id}/rotate-secret shows a secret to verify its deliveries with`,
    );
  }

  /** The account's product of this name (the oldest of several), created (from `create`, else the defaults) if none. */
  async productNamed(name: string, create?: ImportProduct): Promise<{ id: string; created: boolean }> {
    const names = await this.productNames();
    const known = names.get(name);
    if (known) return { id: known, created: false };
    const product = await this.deps.products.createProduct({
      account_id: this.accountId,
      name,
      description: create?.description ?? '',
      policy: create?.policy,
      price: create?.price,
      email_on_purchase: create?.email_on_purchase,
    });
    names.set(name, product.id);
    this.productsById.set(product.id, product);
    return { id: product.id, created: true };
  }

  /** The account's products by name (read once per run, page by page; the first of a name wins). */
  private async productNames(): Promise<Map<string, string>> {
    if (this.names) return this.names;
    const names = new Map<string, string>();
    const all = await everyItem((page) => this.deps.products.listProducts({ account_id: this.accountId, page }));
    // Newest first: an older product of the same name wins.
    for (const p of all) names.set(p.name, p.id);
    this.names = names;
    return names;
  }

  /** The account's product of this id; null when it has none. */
  async product(id: string): Promise<Product | null> {
    if (this.productsById.has(id)) return this.productsById.get(id)!;
    let product: Product | null = null;
    try {
      product = await this.deps.products.getProduct({ account_id: this.accountId, id });
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'not_found') throw err;
    }
    this.productsById.set(id, product);
    return product;
  }
}
