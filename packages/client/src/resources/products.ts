import { objectArg, segment } from '../arguments';
import type { Transport } from '../http';
import { PageList, type Page } from '../pagination';
import type { Product, ProductCreate, ProductListParams, ProductUpdate, SigningKey } from '../types';

/** /api/v1/products: what you sell, its licence policy, price and signing keys. */
export class Products {
  constructor(private readonly http: Transport) {}

  async create(body: ProductCreate): Promise<Product> {
    return this.http.request({
      method: 'POST',
      path: '/api/v1/products',
      body: objectArg(body, 'product'),
      idempotent: false,
    });
  }

  async get(id: string): Promise<Product> {
    return this.http.request({
      method: 'GET',
      path: `/api/v1/products/${segment(id, 'product id')}`,
      idempotent: true,
    });
  }

  list(params: ProductListParams = {}): PageList<Product, ProductListParams> {
    return new PageList(
      (query) => this.http.request<Page<Product>>({ method: 'GET', path: '/api/v1/products', query, idempotent: true }),
      objectArg(params, 'list params'),
    );
  }

  /** Only the fields given change; `price: null` removes the price. */
  async update(id: string, patch: ProductUpdate): Promise<Product> {
    return this.http.request({
      method: 'PATCH',
      path: `/api/v1/products/${segment(id, 'product id')}`,
      body: objectArg(patch, 'patch'),
      idempotent: true,
    });
  }

  // Archive, unarchive and delete are each 409 when the product is already so (or gone), so none is
  // repeated after a lost answer: the second try would meet that 409 (or 404) instead of the answer.

  /**
   * Takes the product off sale: new checkout sessions, licences and batches for it are 409, while its
   * licences keep working (validation, activations, files, renewals). 409 if it is archived already.
   */
  async archive(id: string): Promise<Product> {
    return this.http.request({
      method: 'POST',
      path: `/api/v1/products/${segment(id, 'product id')}/archive`,
      idempotent: false,
    });
  }

  /** Puts an archived product back on sale; 409 if it is not archived. */
  async unarchive(id: string): Promise<Product> {
    return this.http.request({
      method: 'POST',
      path: `/api/v1/products/${segment(id, 'product id')}/unarchive`,
      idempotent: false,
    });
  }

  /**
   * Deletes a product that has no licence and no release, with its signing keys, answering it as it
   * was; 409 otherwise, naming which (archive it instead).
   */
  async delete(id: string): Promise<Product> {
    return this.http.request({
      method: 'DELETE',
      path: `/api/v1/products/${segment(id, 'product id')}`,
      idempotent: false,
    });
  }

  /** The product's Ed25519 public keys, current first: what verifyLicenseFile needs. */
  async signingKeys(id: string): Promise<SigningKey[]> {
    const body = await this.http.request<{ data: SigningKey[] }>({
      method: 'GET',
      path: `/api/v1/products/${segment(id, 'product id')}/signing-keys`,
      idempotent: true,
    });
    return body.data;
  }

  /** A new current signing key; files signed by older keys stay verifiable. */
  async rotateSigningKey(id: string): Promise<SigningKey> {
    return this.http.request({
      method: 'POST',
      path: `/api/v1/products/${segment(id, 'product id')}/signing-keys/rotate`,
      idempotent: false,
    });
  }
}
