import { request as httpRequest } from 'node:http';
import { generateLicenseKey } from '@licensing/proto';
import { connectMongo } from '@licensing/runtime';
import { eventually } from '../support/eventually';
import { useSharedStack } from '../support/shared-stack';
import { client } from '../support/stack';

// Imports: licences brought over with their keys, from jsonl, CSV, Keygen, Lemon Squeezy and
// Gumroad files; foreign keys validate exactly as native ones; bad rows are refused naming the row.

const f = useSharedStack();

const KEYGEN = 'C1B6DE-39A6E3-DE1529-8559A4-E4F6D9-V3';
const LEMON = '38b1460a-5104-4067-a91d-77b872934d51';
const GUMROAD = '85DB562A-C11D4B06-A2335A6B-8C079166';

type Api = ReturnType<typeof client>;

async function upload(api: Api, format: string, body: string, type?: string) {
  return api('POST', `/api/v1/imports?format=${format}`, body, {
    'content-type': type ?? (format === 'jsonl' ? 'application/x-ndjson' : 'text/csv'),
  });
}

async function finished(api: Api, id: string) {
  return eventually(
    async () => {
      const r = await api('GET', `/api/v1/imports/${id}`);
      expect(r.status).toBe(200);
      expect(r.body.status).not.toBe('running');
      return r.body;
    },
    // Four looks a second: an API key's minute (100 requests) lasts through a slow import with room to spare.
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}

async function importFile(api: Api, format: string, body: string) {
  const r = await upload(api, format, body);
  expect(r.status).toBe(202);
  expect(r.body).toMatchObject({ id: expect.stringMatching(/^imp_/), status: 'running' });
  expect(r.headers.get('location')).toBe(`/api/v1/imports/${r.body.id}`);
  return finished(api, r.body.id);
}

/** What a row whose key another account holds, or held before a reroll, is told: one message for both. */
const REFUSED = 'key refused: keys are unique across the whole system, and this one cannot be given to this account';

const jsonl = (...rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;

/**
 * An upload sent as it is in practice: headers first, then the body in pieces of 64 KiB, each written
 * once the last was taken (as a client streaming a file). Stops writing as soon as the answer comes
 * (a refusal before the end): the status, the problem, and how much had been sent.
 */
function streamUpload(
  base: string,
  apiKey: string,
  total: number,
  declared?: number,
): Promise<{ status: number; body: any; sent: number }> {
  const url = new URL(base);
  const line = `${JSON.stringify({ key: 'stream-key-00001', product_name: 'Streamed', customer_email: 's@example.com' })}\n`;
  const piece = Buffer.alloc(64 * 1024, ' ');
  piece.write(line, 0);
  piece[piece.length - 1] = 10;
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: '/api/v1/imports?format=jsonl',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/x-ndjson',
        ...(declared === undefined ? {} : { 'content-length': String(declared) }),
      },
      agent: false,
    });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      let settled = false;
      // The answer is whole at its end; a server closing its side right after answering (a refusal
      // mid-upload) may end the socket first: what arrived is then the answer, or the test says it broke off.
      const settle = () => {
        if (settled) return;
        settled = true;
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), sent });
        } catch {
          reject(new Error(`the ${res.statusCode} answer broke off after ${text.length} bytes: ${text.slice(0, 200)}`));
        }
        req.destroy();
      };
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', settle);
      res.on('close', settle);
      res.on('error', settle);
    });
    // The server may close its side once it has answered: that is how a refusal mid-upload ends.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const next = () => {
      while (!answered && sent < total) {
        const part = piece.subarray(0, Math.min(piece.length, total - sent));
        sent += part.length;
        if (!req.write(part)) {
          req.once('drain', next);
          return;
        }
      }
      if (!answered && sent >= total && declared === undefined) req.end();
    };
    next();
  });
}

describe('imports', () => {
  let productId: string;

  beforeAll(async () => {
    const p = await f.api('POST', '/api/v1/products', { name: 'Imported App', policy: { max_activations: 3 } });
    productId = p.body.id;
  });

  it('imports foreign keys (Keygen, Lemon Squeezy, Gumroad) that then validate exactly like native ones', async () => {
    const native = generateLicenseKey();
    const out = await importFile(
      f.api,
      'jsonl',
      jsonl(
        {
          key: KEYGEN,
          product_id: productId,
          customer_email: 'kg@example.com',
          activations: [{ fingerprint: 'machine-1', name: 'Laptop' }],
          metadata: { source: 'keygen' },
          entitlements: ['pro'],
        },
        {
          key: LEMON,
          product_name: 'From Lemon',
          customer_email: 'ls@example.com',
          expires_at: '2099-01-01T00:00:00Z',
        },
        { key: GUMROAD, product_id: productId, customer_email: 'gr@example.com', status: 'suspended' },
        { key: native, product_id: productId, customer_email: 'native@example.com' },
      ),
    );
    expect(out).toMatchObject({ status: 'done', total: 4, imported: 4, skipped: 0, rejected: 0, errors: [] });

    // Both validation endpoints, as native keys.
    for (const key of [KEYGEN, LEMON, native]) {
      const q = await f.api('GET', `/api/v1/licenses/validate?license_key=${encodeURIComponent(key)}`);
      expect(q.body).toMatchObject({ valid: true, code: 'valid' });
      const b = await f.api('POST', '/api/v1/keys/validate', { key });
      expect(b.body).toMatchObject({ valid: true, code: 'valid', license: { key } });
      // Again: answered from the gateway's cache now, the same.
      expect((await f.api('POST', '/api/v1/keys/validate', { key })).body).toMatchObject({ valid: true });
    }
    const suspended = await f.api('POST', '/api/v1/keys/validate', { key: GUMROAD });
    expect(suspended.body).toMatchObject({ valid: false, code: 'suspended' });
    // A foreign key is its exact text: another case is another (unknown) key, never "a typo".
    const other = await f.api('POST', '/api/v1/keys/validate', { key: LEMON.toUpperCase() });
    expect(other.body).toMatchObject({ valid: false, code: 'not_found', detail: 'no licence with this key' });

    // The licence: its fields, its machine, its entitlements, its product by name.
    const got = await f.api('GET', `/api/v1/licenses/${encodeURIComponent(KEYGEN)}`);
    expect(got.body).toMatchObject({
      key: KEYGEN,
      product_id: productId,
      customer_email: 'kg@example.com',
      status: 'active',
      activations: 1,
      metadata: { source: 'keygen' },
      extra_entitlements: ['pro'],
    });
    const lemon = await f.api('GET', `/api/v1/licenses/${LEMON}`);
    expect(lemon.body.expires_at).toBe('2099-01-01T00:00:00.000Z');
    const named = await f.api('GET', `/api/v1/products/${lemon.body.product_id}`);
    expect(named.body.name).toBe('From Lemon');

    // The licence credential, activations and licence files.
    const app = client(f.stack.url);
    const asLicense = { authorization: `License ${KEYGEN}` };
    const cred = await app('POST', '/api/v1/keys/validate', { key: KEYGEN }, asLicense);
    expect(cred.status).toBe(200);
    expect(cred.body).toMatchObject({ valid: true });
    const act = await app(
      'POST',
      `/api/v1/licenses/${encodeURIComponent(KEYGEN)}/activations`,
      { fingerprint: 'machine-2' },
      asLicense,
    );
    expect(act.status).toBe(201);
    const machines = await f.api('GET', `/api/v1/licenses/${encodeURIComponent(KEYGEN)}/activations`);
    expect(machines.body.data.map((a: { fingerprint: string }) => a.fingerprint).sort()).toEqual([
      'machine-1',
      'machine-2',
    ]);
    const file = await app('POST', `/api/v1/licenses/${encodeURIComponent(KEYGEN)}/file`, {}, asLicense);
    expect(file.status).toBe(201);
    const payload = JSON.parse(Buffer.from(file.body.payload, 'base64url').toString('utf8'));
    expect(payload).toMatchObject({ license_key: KEYGEN });
  });

  it('the typo shortcut never refuses a foreign key: unknown before the import, valid after', async () => {
    const key = 'a1b2c3d4e5f60718293a4b5c6d7e8f90'; // a Keygen-style hex key
    const before = await f.api('POST', '/api/v1/keys/validate', { key });
    expect(before.body).toMatchObject({ valid: false, code: 'not_found', detail: 'no licence with this key' });
    const out = await importFile(
      f.api,
      'jsonl',
      jsonl({ key, product_id: productId, customer_email: 'x@example.com' }),
    );
    expect(out).toMatchObject({ imported: 1 });
    // The "not found" the gateway remembered is gone with license.created.
    await eventually(async () => {
      expect((await f.api('POST', '/api/v1/keys/validate', { key })).body).toMatchObject({ valid: true });
      expect((await f.api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body).toMatchObject({ valid: true });
    });
  });

  it('is idempotent per row: the same file again adds nothing; the same key with other fields is rejected', async () => {
    const key = `${'f'.repeat(8)}-1111-4222-8333-${'a'.repeat(12)}`;
    const file = jsonl({ key, product_id: productId, customer_email: 'again@example.com' });
    expect(await importFile(f.api, 'jsonl', file)).toMatchObject({ imported: 1, skipped: 0 });
    expect(await importFile(f.api, 'jsonl', file)).toMatchObject({ imported: 0, skipped: 1, rejected: 0 });
    const changed = await importFile(
      f.api,
      'jsonl',
      jsonl({ key, product_id: productId, customer_email: 'someone-else@example.com' }),
    );
    expect(changed).toMatchObject({
      imported: 0,
      rejected: 1,
      errors: [{ row: 1, message: 'key is already in this account with another customer_email' }],
    });
  });

  it('imports the good rows of a file with bad ones, naming each bad row (too long, taken, unknown product, …)', async () => {
    // A key of another account: taken, and the answer says nothing of where.
    const other = await f.stack.newAccount();
    const otherApi = client(f.stack.url, other.apiKey);
    const otherProduct = await otherApi('POST', '/api/v1/products', { name: 'Theirs' });
    const taken = 'TAKEN-KEY-0000-1111-2222';
    expect(
      await importFile(
        otherApi,
        'jsonl',
        jsonl({ key: taken, product_id: otherProduct.body.id, customer_email: 'o@example.com' }),
      ),
    ).toMatchObject({ imported: 1 });

    const native = generateLicenseKey();
    const typo = native.slice(0, 3) + (native[3] === '7' ? '8' : '7') + native.slice(4);
    const lines = [
      JSON.stringify({ key: 'good-key-0001', product_id: productId, customer_email: 'a@example.com' }),
      JSON.stringify({ key: 'k'.repeat(65), product_id: productId, customer_email: 'a@example.com' }),
      JSON.stringify({ key: taken, product_id: productId, customer_email: 'a@example.com' }),
      JSON.stringify({
        key: 'good-key-0002',
        product_id: 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P',
        customer_email: 'a@example.com',
      }),
      JSON.stringify({ key: 'good-key-0003', product_id: productId, customer_email: 'not-an-email' }),
      '{"key": "broken',
      JSON.stringify({ key: typo, product_id: productId, customer_email: 'a@example.com' }),
      JSON.stringify({ key: 'good-key-0004', product_id: productId, customer_email: 'b@example.com', status: 'lost' }),
      JSON.stringify({ key: 'good-key-0001', product_id: productId, customer_email: 'other@example.com' }),
      JSON.stringify({
        key: 'good-key-0005',
        product_id: productId,
        customer_email: 'c@example.com',
        max_activations: 1,
        activations: ['m1', 'm2'],
      }),
      JSON.stringify({ key: 'good-key-0006', product_id: productId, customer_email: 'd@example.com' }),
      JSON.stringify({ key: 'good-key-0007', product_id: productId, customer_email: 'e@example.com', policy: 'pro' }),
      JSON.stringify({
        key: 'good-key-0008',
        product_id: productId,
        customer_email: 'e@example.com',
        policy: { grace_days: 400 },
      }),
      JSON.stringify({
        key: 'good-key-0009',
        product_id: productId,
        customer_email: 'e@example.com',
        policy: { seats: 2 },
      }),
    ];
    const out = await importFile(f.api, 'jsonl', `${lines.join('\n')}\n`);
    expect(out).toMatchObject({ status: 'done', total: 14, imported: 2, skipped: 0, rejected: 12 });
    expect(out.errors).toEqual([
      { row: 2, message: 'key is longer than 64 characters (65)' },
      { row: 3, message: REFUSED },
      { row: 4, message: 'product_id prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P: no such product in this account' },
      { row: 5, message: 'customer_email must be an e-mail address' },
      { row: 6, message: 'not a JSON object on one line' },
      {
        row: 7,
        message:
          'key has the shape of a native key (30 Crockford characters) but its check characters are wrong: it could never validate',
      },
      { row: 8, message: 'status must be one of active, suspended, revoked, expired' },
      { row: 9, message: 'key appears earlier in the file (row 1) with another customer_email' },
      { row: 10, message: 'activations: 2 machines, more than max_activations (1)' },
      { row: 12, message: 'policy must be an object' },
      { row: 13, message: 'policy.grace_days must be a whole number from 0 to 365' },
      { row: 14, message: 'policy.seats: not a policy field' },
    ]);
    expect(JSON.stringify(out)).not.toContain(other.accountId);
    // Nothing half-written: only the good rows are there.
    expect((await f.api('GET', '/api/v1/licenses/good-key-0001')).status).toBe(200);
    expect((await f.api('GET', '/api/v1/licenses/good-key-0006')).status).toBe(200);
    for (const k of ['good-key-0002', 'good-key-0003', 'good-key-0004', 'good-key-0005', 'good-key-0008'])
      expect((await f.api('GET', `/api/v1/licenses/${k}`)).status).toBe(404);
    // The other account's licence is untouched.
    expect((await otherApi('GET', `/api/v1/licenses/${taken}`)).body.customer_email).toBe('o@example.com');
  });

  it('a key a reroll replaced stays taken: in its grace or after it, in another account or this one', async () => {
    // Another account's licences, rerolled: one old key still in its grace, one past it (grace 0).
    const other = await f.stack.newAccount();
    const otherApi = client(f.stack.url, other.apiKey);
    const theirProduct = (await otherApi('POST', '/api/v1/products', { name: 'Rerolled theirs' })).body.id;
    const issue = async (api: Api, product: string) =>
      (await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'holder@example.com' })).body
        .license_key as string;
    const inGrace = await issue(otherApi, theirProduct);
    const lapsed = await issue(otherApi, theirProduct);
    const inGraceNew = (await otherApi('POST', `/api/v1/licenses/${inGrace}/reroll`, { grace_hours: 24 })).body.key;
    expect((await otherApi('POST', `/api/v1/licenses/${lapsed}/reroll`, { grace_hours: 0 })).status).toBe(200);
    // And one of this account's own.
    const mine = await issue(f.api, productId);
    expect((await f.api('POST', `/api/v1/licenses/${mine}/reroll`, { grace_hours: 1 })).status).toBe(200);

    const row = (key: string) => ({ key, product_id: productId, customer_email: 'importer@example.com' });
    const out = await importFile(
      f.api,
      'jsonl',
      jsonl(row('fresh-key-after-reroll-1'), row(inGrace), row(lapsed), row(mine), row('fresh-key-after-reroll-2')),
    );
    expect(out).toMatchObject({ status: 'done', total: 5, imported: 2, skipped: 0, rejected: 3 });
    expect(out.errors).toEqual([
      { row: 2, message: REFUSED },
      { row: 3, message: REFUSED },
      { row: 4, message: 'key was replaced by a reroll in this account: a replaced key is never given out again' },
    ]);
    expect(JSON.stringify(out)).not.toContain(other.accountId);
    // Nothing was written for them: the importer has no such licence, and the old keys answer as before.
    for (const key of [inGrace, lapsed, mine]) expect((await f.api('GET', `/api/v1/licenses/${key}`)).status).toBe(404);
    const stillTheirs = await otherApi('POST', '/api/v1/keys/validate', { key: inGrace });
    expect(stillTheirs.body).toMatchObject({ valid: true, next_action: 'update_key', license: { key: inGrace } });
    expect((await otherApi('POST', '/api/v1/keys/validate', { key: lapsed })).body).toMatchObject({
      valid: false,
      code: 'not_found',
    });
    // The importer's own key validates none of them; the other account's new key is untouched.
    expect((await f.api('POST', '/api/v1/keys/validate', { key: lapsed })).body.code).toBe('not_found');
    expect((await otherApi('GET', `/api/v1/licenses/${inGraceNew}`)).body.customer_email).toBe('holder@example.com');
  });

  it('refuses a file in a wrong format with 400 (naming the column or line), 415 for another Content-Type', async () => {
    const csvAsJsonl = await upload(f.api, 'jsonl', 'key,customer_email\nabc,def\n');
    expect(csvAsJsonl.status).toBe(400);
    expect(csvAsJsonl.body.errors).toEqual([
      {
        field: 'body',
        message: 'not a jsonl file: line 1 is not JSON (send Content-Type: text/csv and a CSV format for CSV files)',
      },
    ]);
    const jsonlAsCsv = await upload(f.api, 'keygen', jsonl({ key: 'abcdefgh' }));
    expect(jsonlAsCsv.status).toBe(400);
    expect(jsonlAsCsv.body.detail).toBe('not a keygen file: it looks like jsonl (use format=jsonl)');
    const noKey = await upload(f.api, 'gumroad', 'Item Name,Purchase Email\nApp,a@example.com\n');
    expect(noKey.status).toBe(400);
    expect(noKey.body.detail).toBe('not a gumroad file: the license key column is missing (one of: license_key)');
    const wrongType = await upload(f.api, 'csv', 'key\n', 'application/json');
    expect(wrongType.status).toBe(415);
    const badFormat = await upload(f.api, 'polar', 'key\n', 'text/csv');
    expect(badFormat.status).toBe(400);
    const empty = await upload(f.api, 'jsonl', '');
    expect(empty.status).toBe(400);
  });

  it('maps the columns of Keygen, Lemon Squeezy, Gumroad and plain CSV exports', async () => {
    const keygen = await importFile(
      f.api,
      'keygen',
      [
        'id,key,name,status,expiry,maxMachines,policy,email,metadata,machines',
        `lic-1,KG-0001-AAAA-BBBB,Team,ACTIVE,2099-05-01T00:00:00Z,5,Keygen Pro,kg1@example.com,"{""seat"":""a""}",fp-1;fp-2`,
        'lic-2,KG-0002-AAAA-BBBB,,BANNED,,,Keygen Pro,kg2@example.com,,',
        'lic-3,KG-0003-AAAA-BBBB,,EXPIRED,2020-01-01T00:00:00Z,,Keygen Pro,kg3@example.com,,',
      ].join('\r\n'),
    );
    expect(keygen).toMatchObject({ status: 'done', imported: 3, rejected: 0 });
    const kg1 = (await f.api('GET', '/api/v1/licenses/KG-0001-AAAA-BBBB')).body;
    expect(kg1).toMatchObject({
      customer_email: 'kg1@example.com',
      status: 'active',
      expires_at: '2099-05-01T00:00:00.000Z',
      activations: 2,
      metadata: { seat: 'a', keygen_id: 'lic-1', name: 'Team' },
      policy: { max_activations: 5 },
    });
    expect((await f.api('GET', '/api/v1/licenses/KG-0002-AAAA-BBBB')).body.status).toBe('revoked');
    expect((await f.api('GET', '/api/v1/licenses/KG-0003-AAAA-BBBB')).body.status).toBe('expired');

    const lemon = await importFile(
      f.api,
      'lemonsqueezy',
      [
        'Key,Status,Product,Variant,Customer name,Customer email,Activation limit,Expires at,Order',
        'd9b7a1e0-1111-4a4a-8b8b-0123456789ab,active,Lemon App,Yearly,Ada,ada@example.com,2,2099-01-01,1001',
        'd9b7a1e0-2222-4a4a-8b8b-0123456789ab,disabled,Lemon App,Yearly,Bob,bob@example.com,,,1002',
      ].join('\n'),
    );
    expect(lemon).toMatchObject({ status: 'done', imported: 2, rejected: 0 });
    expect((await f.api('GET', '/api/v1/licenses/d9b7a1e0-1111-4a4a-8b8b-0123456789ab')).body).toMatchObject({
      customer_email: 'ada@example.com',
      status: 'active',
      policy: { max_activations: 2 },
      metadata: { lemonsqueezy_order: '1001', lemonsqueezy_variant: 'Yearly', customer_name: 'Ada' },
    });
    expect((await f.api('GET', '/api/v1/licenses/d9b7a1e0-2222-4a4a-8b8b-0123456789ab')).body.status).toBe('suspended');

    const gumroad = await importFile(
      f.api,
      'gumroad',
      [
        'Purchase ID,Item Name,Buyer Name,Purchase Email,License Key,Refunded?,Disputed?',
        'sale1,Gum App,Cy,cy@example.com,11111111-22222222-33333333-44444444,false,false',
        'sale2,Gum App,Di,di@example.com,11111111-22222222-33333333-55555555,true,false',
        'sale3,Gum Book,Ed,ed@example.com,,false,false',
      ].join('\n'),
    );
    expect(gumroad).toMatchObject({
      status: 'done',
      imported: 2,
      rejected: 1,
      errors: [{ row: 3, message: 'this sale has no License Key (a product sold without licence keys)' }],
    });
    expect((await f.api('GET', '/api/v1/licenses/11111111-22222222-33333333-55555555')).body.status).toBe('revoked');
    expect(
      (await f.api('POST', '/api/v1/keys/validate', { key: '11111111-22222222-33333333-44444444' })).body,
    ).toMatchObject({ valid: true });

    const csv = await importFile(
      f.api,
      'csv',
      [
        'key,product_id,customer_email,status,expires_at,max_activations,activations,entitlements,metadata.plan',
        `CSV-KEY-00000001,${productId},csv@example.com,active,,2,"[{""fingerprint"":""m1"",""name"":""Desk, top""}]",pro; beta,gold`,
      ].join('\n'),
    );
    expect(csv).toMatchObject({ status: 'done', imported: 1, rejected: 0 });
    expect((await f.api('GET', '/api/v1/licenses/CSV-KEY-00000001')).body).toMatchObject({
      activations: 1,
      extra_entitlements: ['beta', 'pro'],
      metadata: { plan: 'gold' },
    });
  });

  it('keeps the first 1,000 rejected rows in errors, in row order, and counts every one', async () => {
    const rows = 1005;
    const lines = Array.from({ length: rows }, (_, i) =>
      JSON.stringify({ key: `k${i}`, product_id: productId, customer_email: `cap${i}@example.com` }),
    );
    const out = await importFile(f.api, 'jsonl', `${lines.join('\n')}\n`);
    expect(out).toMatchObject({ status: 'done', total: rows, imported: 0, skipped: 0, rejected: rows });
    expect(out.errors).toHaveLength(1000);
    expect(out.errors.map((e: { row: number }) => e.row)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(out.errors[999]).toEqual({
      row: 1000,
      message: 'key must be 8 to 64 characters: letters, digits and . _ ~ + = : -',
    });
  });

  it('413 past the size limit: declared by Content-Length (100 MB, nothing read), or streamed past it (a lowered limit)', async () => {
    // The default limit, 100 MB, by what the request declares: refused before a byte of the body is read.
    const declared = await streamUpload(f.stack.url, f.apiKey, 256 * 1024, 100 * 1024 * 1024 + 1);
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ code: 'payload_too_large', detail: 'an import file is at most 100 MB' });
    // Streamed without a length: the gateway counts what arrives and stops at the limit (IMPORT_MAX_BYTES,
    // lowered here to 1 MiB so the test sends little).
    const small = await f.stack.extraGateway({ IMPORT_MAX_BYTES: String(1024 * 1024) });
    try {
      const atLimit = await streamUpload(small.url, f.apiKey, 1024 * 1024);
      expect(atLimit.status).toBe(202);
      await finished(f.api, atLimit.body.id);
      const past = await streamUpload(small.url, f.apiKey, 64 * 1024 * 1024);
      expect(past.status).toBe(413);
      expect(past.body).toMatchObject({ code: 'payload_too_large', detail: 'an import file is at most 1 MB' });
      // Refused mid-way: the gateway stopped reading at the limit, so the client could write only what
      // the sockets' buffers hold (a few MB), never the whole 64 MB.
      expect(past.sent).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await small.stop();
    }
    // And nothing is left of the refused upload: its import failed, its pieces deleted.
    const db = await connectMongo(f.stack.topology.mongoUrl, `${f.stack.topology.dbPrefix}_license`);
    try {
      const refused = await db.collection('imports').find({ account_id: f.accountId, state: 'failed' }).toArray();
      expect(refused.map((d) => d.failure)).toContain('the upload broke off before the whole file arrived');
      for (const d of refused) expect(await db.collection('import_chunks').countDocuments({ owner_id: d._id })).toBe(0);
    } finally {
      await db.close();
    }
  }, 60_000); // two gateways, three uploads (one of 64 MB offered), an import waited for

  it('refuses a CSV header of more than 256 columns with 400 body, before anything is read', async () => {
    const header = ['key', 'product_id', 'customer_email', ...Array.from({ length: 35_997 }, (_, i) => `c${i}`)];
    const rows = Array.from({ length: 20_000 }, () => ',').join('\n');
    // An account of its own (its own minute of requests, and its own import at a time).
    const mine = await f.stack.newAccount();
    const api = client(f.stack.url, mine.apiKey);
    const product = (await api('POST', '/api/v1/products', { name: 'Wide' })).body.id;
    const wide = await upload(api, 'csv', `${header.join(',')}\n${rows}\n`);
    expect(wide.status).toBe(400);
    expect(wide.body.errors).toEqual([
      { field: 'body', message: 'not a csv file: the header has more than 256 columns (at most 256)' },
    ]);
    // The service answered everything else meanwhile, and the account may send its next file at once.
    const fine = await importFile(
      api,
      'csv',
      `key,product_id,customer_email\nwide-after-0001,${product},w@example.com\n`,
    );
    expect(fine).toMatchObject({ status: 'done', imported: 1 });
  });

  it('one import at a time per account: another while one waits or runs is 409; another account is not held up', async () => {
    const mine = await f.stack.newAccount();
    const api = client(f.stack.url, mine.apiKey);
    const product = (await api('POST', '/api/v1/products', { name: 'One at a time' })).body.id;
    const rows = Array.from({ length: 3000 }, (_, i) => ({
      key: `one-at-a-time-${String(i).padStart(5, '0')}`,
      product_id: product,
      customer_email: 'q@example.com',
    }));
    const first = await upload(api, 'jsonl', jsonl(...rows));
    expect(first.status).toBe(202);
    const second = await upload(api, 'jsonl', jsonl(rows[0]));
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({
      code: 'conflict',
      detail: `this account already has an import waiting or running (${first.body.id}): an account runs 1 import at a time; send the next once it is done or failed`,
    });
    const other = await f.stack.newAccount();
    const otherApi = client(f.stack.url, other.apiKey);
    const theirProduct = (await otherApi('POST', '/api/v1/products', { name: 'Meanwhile' })).body.id;
    const theirs = await importFile(
      otherApi,
      'jsonl',
      jsonl({ key: 'meanwhile-key-0001', product_id: theirProduct, customer_email: 'm@example.com' }),
    );
    expect(theirs).toMatchObject({ status: 'done', imported: 1 });
    // A file of 3,000 rows takes a while on a loaded machine: waited for longer than a small one.
    const big = await eventually(
      async () => {
        const r = await api('GET', `/api/v1/imports/${first.body.id}`);
        expect(r.body.status).not.toBe('running');
        return r.body;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    expect(big).toMatchObject({ status: 'done', imported: 3000 });
    const next = await upload(api, 'jsonl', jsonl(rows[0]));
    expect(next.status).toBe(202);
    expect(await finished(api, next.body.id)).toMatchObject({ status: 'done', skipped: 1 });
  }, 120_000);

  it("another account's import is not found", async () => {
    // Accounts of their own: the fixture's key has spent much of its minute on the tests before.
    const mine = await f.stack.newAccount();
    const api = client(f.stack.url, mine.apiKey);
    const product = (await api('POST', '/api/v1/products', { name: 'Mine' })).body.id;
    const out = await upload(
      api,
      'jsonl',
      jsonl({ key: 'mine-0000001', product_id: product, customer_email: 'm@example.com' }),
    );
    expect(out.status).toBe(202);
    const other = await f.stack.newAccount();
    const r = await client(f.stack.url, other.apiKey)('GET', `/api/v1/imports/${out.body.id}`);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ code: 'not_found' });
    expect(await finished(api, out.body.id)).toMatchObject({ status: 'done', imported: 1 });
  }, 60_000);
});
