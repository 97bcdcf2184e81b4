import { randomBytes } from 'node:crypto';
import { Metadata, status } from '@grpc/grpc-js';
import { ErrorDetail, LicenseServiceClient, LicenseServiceService } from '@licensing/proto';
import {
  AppError,
  createClient,
  createLogger,
  ERROR_DETAIL_KEY,
  fromServiceError,
  GrpcServer,
  Metrics,
  tokenDigest,
  toServiceError,
  type Handlers,
} from '@licensing/runtime';

// A refusal crosses the gateway–service boundary as typed fields (common.proto's ErrorDetail in the
// "licensing-error-bin" trailer): its code, the fields at fault, the validation code that names it and
// its Retry-After. The caller acts on those fields, never on words read out of the message. Served and
// called here through a real grpc-js server and client on loopback (in process: no other server).

const token = randomBytes(16).toString('hex');
let server: GrpcServer;
let client: ReturnType<typeof createClient<LicenseServiceClient>>;

/** What the fake licence service throws for each key asked. */
const refusals: Record<string, unknown> = {
  full: AppError.refusedAs(
    'conflict',
    'activation_limit_reached',
    'activation_limit_reached: the licence is already active on 2 machines; deactivate one first',
  ),
  unseated: AppError.refusedAs('conflict', 'not_activated', 'not_activated: this machine is not activated'),
  bad: new AppError('invalid_request', 'the request has 2 problems', [
    { field: 'licenses[3].customer_email', message: 'customer_email must be an e-mail address' },
    { field: 'name', message: 'name is at most 100 characters — «ünïcödé»' },
  ]),
  slow: AppError.rateLimited('too many deactivations', 42.2),
  plain: new AppError('conflict', 'activation_limit_reached: a conflict whose message only looks like a code'),
  bug: new Error('database password is hunter2'),
};

beforeAll(async () => {
  server = new GrpcServer({
    callers: `gateway=${tokenDigest(token)}`,
    log: createLogger('error-detail-test', 'silent'),
    metrics: new Metrics('error_detail_test'),
  });
  server.add(
    LicenseServiceService,
    {
      async activate(req) {
        throw refusals[req.key];
      },
    } as Partial<Handlers<typeof LicenseServiceService>> as Handlers<typeof LicenseServiceService>,
    { gateway: ['activate'] },
  );
  const port = await server.listen('127.0.0.1', 0);
  client = createClient(LicenseServiceClient, `127.0.0.1:${port}`, { caller: 'gateway', token });
});

afterAll(async () => {
  client?.close();
  await server?.shutdown(1000);
});

const refusalOf = async (key: string): Promise<AppError> => {
  const err = await client.call.activate({ account_id: 'acct_1', key, fingerprint: 'fp', name: '' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
};

describe('a refusal sent over gRPC', () => {
  it('keeps its validation code as a typed field (activation_limit_reached, not_activated)', async () => {
    const full = await refusalOf('full');
    expect(full).toMatchObject({
      code: 'conflict',
      validationCode: 'activation_limit_reached',
      message: 'activation_limit_reached: the licence is already active on 2 machines; deactivate one first',
    });
    expect(await refusalOf('unseated')).toMatchObject({ code: 'conflict', validationCode: 'not_activated' });
  });

  it('has no validation code when the service named none, whatever its message says', async () => {
    const plain = await refusalOf('plain');
    expect(plain.code).toBe('conflict');
    expect(plain.validationCode).toBeUndefined();
  });

  it('keeps its field errors (UTF-8 included) and its Retry-After', async () => {
    expect(await refusalOf('bad')).toMatchObject({
      code: 'invalid_request',
      message: 'the request has 2 problems',
      fieldErrors: [
        { field: 'licenses[3].customer_email', message: 'customer_email must be an e-mail address' },
        { field: 'name', message: 'name is at most 100 characters — «ünïcödé»' },
      ],
    });
    expect(await refusalOf('slow')).toMatchObject({ code: 'rate_limited', retryAfterS: 43 });
  });

  it('hides an unexpected error as internal, with no detail', async () => {
    const bug = await refusalOf('bug');
    expect(bug).toMatchObject({ code: 'internal', message: 'internal error', fieldErrors: [] });
    expect(bug.validationCode).toBeUndefined();
  });
});

describe('the ErrorDetail trailer', () => {
  const detail = (d: Partial<ErrorDetail>) => {
    const metadata = new Metadata();
    const full = { code: '', field_errors: [], validation_code: '', retry_after_s: 0, ...d };
    metadata.set(ERROR_DETAIL_KEY, Buffer.from(ErrorDetail.encode(full).finish()));
    return metadata;
  };

  it('is read for what it types: a code or validation code outside the vocabularies is not taken', () => {
    const err = fromServiceError({
      code: status.FAILED_PRECONDITION,
      details: 'refused',
      metadata: detail({ code: 'conflict', validation_code: 'seats_gone' }),
    } as never);
    expect(err.code).toBe('conflict');
    expect(err.validationCode).toBeUndefined();
    const unknownCode = fromServiceError({
      code: status.NOT_FOUND,
      details: 'gone',
      metadata: detail({ code: 'vanished' }),
    } as never);
    expect(unknownCode.code).toBe('not_found');
  });

  it('that cannot be decoded counts as none: the gRPC status decides the code', () => {
    const metadata = new Metadata();
    metadata.set(ERROR_DETAIL_KEY, Buffer.from([0xff, 0xff, 0xff]));
    const err = fromServiceError({ code: status.INVALID_ARGUMENT, details: 'bad', metadata } as never);
    expect(err).toMatchObject({ code: 'invalid_request', fieldErrors: [] });
  });

  it("of the previous release's form is read and sent for one release (rolling upgrades: expand, then contract)", () => {
    const metadata = new Metadata();
    metadata.set('lk-error-code', 'payload_too_large');
    metadata.set('lk-field-errors-bin', Buffer.from(JSON.stringify([{ field: 'data', message: 'too big' }])));
    const old = fromServiceError({ code: status.INVALID_ARGUMENT, details: 'too big', metadata } as never);
    expect(old).toMatchObject({ code: 'payload_too_large', fieldErrors: [{ field: 'data', message: 'too big' }] });
    expect(old.validationCode).toBeUndefined();
    const sent = toServiceError(AppError.rateLimited('slow down', 7)).metadata!;
    expect([sent.get('lk-error-code')[0], sent.get('lk-retry-after')[0]]).toEqual(['rate_limited', '7']);
  });
});
