import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata, status } from '@grpc/grpc-js';
import {
  AppError,
  ConfigError,
  checkEmail,
  fromServiceError,
  int,
  isId,
  loadConfig,
  newId,
  oneOf,
  PeriodicTask,
  str,
  toServiceError,
} from '@licensing/runtime';
import { eventually } from '../../../../test/support/eventually';

describe('ids', () => {
  it('are prefixed, time-ordered and unique even within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, () => newId('lic', 1_700_000_000_000));
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
    expect(newId('lic', 1_700_000_000_001) > ids[999]).toBe(true);
    expect(isId('lic', ids[0])).toBe(true);
    expect(isId('prod', ids[0])).toBe(false);
    expect(isId('lic', `${ids[0]}x`)).toBe(false);
  });
});

describe('config', () => {
  const schema = {
    PORT: int('port', { default: 8080, min: 0, max: 65535 }),
    TOKEN: str('secret', { secret: true }),
    MODE: oneOf(['a', 'b'] as const, 'mode', { default: 'a' }),
  };

  it('applies defaults and parses values', () => {
    expect(loadConfig(schema, { TOKEN: 't', PORT: '9000' })).toEqual({ PORT: 9000, TOKEN: 't', MODE: 'a' });
  });

  it('names every problem at once', () => {
    expect(() => loadConfig(schema, { PORT: '70000', MODE: 'c' })).toThrow(ConfigError);
    try {
      loadConfig(schema, { PORT: 'x', MODE: 'c' });
    } catch (err) {
      expect((err as Error).message).toMatch(/PORT must be an integer/);
      expect((err as Error).message).toMatch(/TOKEN is required/);
      expect((err as Error).message).toMatch(/MODE must be one of a, b/);
    }
  });

  it('reads a secret from NAME_FILE (trimmed), names a file it cannot read, and takes no _FILE for plain settings', () => {
    const dir = mkdtempSync(join(tmpdir(), 'licensing-config-'));
    try {
      writeFileSync(join(dir, 'token'), 's3cret\n');
      writeFileSync(join(dir, 'port'), '9000');
      expect(loadConfig(schema, { TOKEN_FILE: join(dir, 'token') }).TOKEN).toBe('s3cret');
      expect(loadConfig(schema, { TOKEN: 'direct', TOKEN_FILE: join(dir, 'token') }).TOKEN).toBe('direct');
      expect(() => loadConfig(schema, { TOKEN_FILE: join(dir, 'missing') })).toThrow(
        /TOKEN_FILE cannot be read \(ENOENT/,
      );
      expect(() => loadConfig(schema, {})).toThrow(/TOKEN is required \(secret\); or give TOKEN_FILE/);
      expect(loadConfig(schema, { TOKEN: 't', PORT_FILE: join(dir, 'port') }).PORT).toBe(8080);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('errors across gRPC', () => {
  it('keep their code and field errors (UTF-8 included) through a round trip', () => {
    const sent = toServiceError(
      new AppError('invalid_request', 'bad', [{ field: 'product_id', message: 'must be an id (prod_…)' }]),
    );
    expect(sent.code).toBe(status.INVALID_ARGUMENT);
    const back = fromServiceError({ ...sent, message: '', name: 'Error' } as never);
    expect(back).toMatchObject({
      code: 'invalid_request',
      message: 'bad',
      fieldErrors: [{ field: 'product_id', message: 'must be an id (prod_…)' }],
    });
  });

  it('hide unknown errors as internal, with no detail', () => {
    const sent = toServiceError(new Error('database password is hunter2'));
    expect(sent.code).toBe(status.INTERNAL);
    expect(sent.details).toBe('internal error');
  });

  it('map transport failures to service_unavailable', () => {
    expect(
      fromServiceError({
        code: status.UNAVAILABLE,
        details: 'No connection established',
        metadata: new Metadata(),
      } as never).code,
    ).toBe('service_unavailable');
    expect(
      fromServiceError({ code: status.DEADLINE_EXCEEDED, details: 'deadline', metadata: new Metadata() } as never).code,
    ).toBe('service_unavailable');
    // A replica still starting (or older, mid-deploy) does not know the method: retry, not a 500.
    expect(
      fromServiceError({ code: status.UNIMPLEMENTED, details: 'not implemented', metadata: new Metadata() } as never)
        .code,
    ).toBe('service_unavailable');
  });
});

describe('e-mail check', () => {
  it.each([['a@example.com'], ['first.last+tag@sub.example.co.uk'], ['  spaced@example.com ']])('accepts %p', (e) => {
    expect(checkEmail('customer_email', e)).toBe(e.trim());
  });

  it.each([
    [''],
    ['plain'],
    ['a@b'],
    ['a@b.'],
    ['@example.com'],
    ['a@@example.com'],
    ['a b@example.com'],
    [`${'x'.repeat(65)}@example.com`],
    [`a@${'x'.repeat(250)}.com`],
  ])('refuses %p', (e) => {
    expect(() => checkEmail('customer_email', e)).toThrow(AppError);
  });
});

describe('PeriodicTask', () => {
  it('asks for its next delay after each run, and soon() brings a waiting run forward', async () => {
    const log = { warn: () => undefined } as never;
    let runs = 0;
    const task = new PeriodicTask(
      'test',
      async () => void runs++,
      () => (runs === 0 ? 10 : 60_000),
      log,
    );
    task.start();
    await eventually(() => expect(runs).toBe(1));
    task.soon(0); // the next run was 60 s away
    await eventually(() => expect(runs).toBe(2));
    await task.stop();
  });

  it('a soon() asked for during a run is followed by another run, not by the interval', async () => {
    const log = { warn: () => undefined } as never;
    let runs = 0;
    let release!: () => void;
    const task = new PeriodicTask(
      'test',
      async () => {
        runs++;
        // The first run waits until the test has asked for soon() while it runs.
        if (runs === 1) await new Promise<void>((r) => (release = r));
      },
      () => (runs === 0 ? 0 : 60_000),
      log,
    );
    task.start();
    await eventually(() => expect(release).toBeDefined());
    task.soon(0); // what this run read may predate what was asked for: it must run again
    release();
    await eventually(() => expect(runs).toBe(2));
    await task.stop();
  });
});
