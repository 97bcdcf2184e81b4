// `npm run admin -- <command>`: the operator CLI. It talks to the running
// account service over gRPC (never to its database) and prints one JSON line. The jobs (migrate,
// reseal, …) are the exception: they run a service's own job code with that service's settings.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AccountServiceClient, auditEventJson, type Account } from '@licensing/proto';
import {
  AppError,
  createClient,
  forbiddenCharacter,
  requestOrigin,
  runServiceJob,
  withCallScope,
  type Unary,
} from '@licensing/runtime';
import { repoRoot } from './lib/paths';
import { componentToken } from './lib/secrets';
import { importCliFormats, runExport, runImport } from './lib/admin-transfer';

const USAGE = `usage: npm run admin -- <command> [options]

  create-account --name NAME [--plan free|pro|enterprise] [--owner-email EMAIL]
                                  prints {"account_id","api_key"}; with an owner e-mail, mails them
                                  an invitation to join as the account's owner member
  create-key --account ID [--scope full|validate] [--name N] prints {"key_id","api_key"}
             [--role admin|developer|support|read_only|validate]   (docs/api.md, "Roles"; default admin)
  revoke-key --account ID --key-id ID                        prints {"key_id","revoked_at"}
  revoke-all-keys --account ID                               revokes every live key; prints {"revoked"}
  list-keys --account ID [--state live|revoked]              prints {"data":[...],"live_keys","max_live_keys"}
                                                             (every key in that state, newest first)
  set-plan --account ID --plan free|pro|enterprise           prints the account
  set-limits --account ID [--per-minute N] [--per-hour N]    prints the account (0 = plan default)
  set-support-email --account ID --email E                   the address in buyers' purchase e-mails ("" removes it)
  import --account ID --format jsonl|csv|keygen|lemonsqueezy|gumroad FILE
                                                             imports licences with their keys (a progress bar on a
                                                             terminal); prints the import: counts and rejected rows
  export --account ID [--out FILE]                           exports the account as JSON lines to FILE; prints the export
  audit-export --account ID [--since T] [--until T]          prints the account's audit log as JSON lines, newest
                                                             first (T: ISO 8601, e.g. 2026-01-31); progress on stderr

import and export go through the gateway (GATEWAY_URL, else the one npm start recorded) with a full
API key made for the account for the run and revoked after it.

Jobs, run with the named service's own settings (its MONGO_URL[_FILE], MONGO_DB and secrets, as its
Deployment has them; docs/operations.md, "Upgrades" and "Rotating secrets"), progress on stderr:
  migrate --service NAME          applies the service's pending migrations (each once, whoever runs them)
  migrations --service NAME       lists its migrations and whether each is applied
  reseal --service product|webhook|account
                                  moves every sealed secret to SIGNING_KEY_SECRET's / WEBHOOK_SECRET_KEY's
                                  current key; prints {"scanned","resealed","unreadable":[ids]}
  pepper-usage --service account  live API keys per API_KEY_PEPPER version
  reset-mfa --service account --email EMAIL
                                  turns off a person's two-factor sign-in (lost phone and recovery codes)

Connects to ACCOUNT_GRPC_ADDR (else the address npm start recorded) as the operator, with
INTERNAL_TOKEN or INTERNAL_TOKEN_FILE (the operator's token; else the one derived from the development
secret npm start created). In compose: docker compose run --rm admin <command> …`;

function usage(message?: string): never {
  if (message) console.error(`error: ${message}\n`);
  console.error(USAGE);
  process.exit(2);
}

export function parseArgs(argv: string[]): { command: string; flags: Record<string, string>; files: string[] } {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h') usage();
  const flags: Record<string, string> = {};
  const files: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (!a.startsWith('--')) {
      // Only import takes a file (its one positional argument).
      if (command !== 'import' || files.length) usage(`unexpected argument "${a}"`);
      files.push(a);
      continue;
    }
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2);
    const value = inline ?? rest[++i];
    if (value === undefined || value.startsWith('--')) usage(`--${name} needs a value`);
    // The API's rule for every string (@licensing/runtime text.ts): no control characters.
    const bad = forbiddenCharacter(value);
    if (bad) usage(`--${name} must not contain control characters (found ${bad})`);
    flags[name] = value;
  }
  return { command, flags, files };
}

/** The operator's token from a mounted secret; a missing or empty file is a usage error naming it. */
function tokenFromFile(file: string): string {
  let token = '';
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (err) {
    usage(`INTERNAL_TOKEN_FILE ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!token) usage(`INTERNAL_TOKEN_FILE ${file} is empty`);
  return token;
}

/** The gateway import and export go through: GATEWAY_URL, else the one npm start recorded. */
function gatewayUrl(): string {
  const stackFile = join(process.env.DATA_DIR ?? join(repoRoot(), '.data'), 'run', 'stack.json');
  const recorded = existsSync(stackFile)
    ? (JSON.parse(readFileSync(stackFile, 'utf8')) as { gateway_url?: string }).gateway_url
    : undefined;
  return (process.env.GATEWAY_URL ?? recorded ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
}

function connection(): { addr: string; token: string } {
  const root = repoRoot();
  const dataDir = process.env.DATA_DIR ?? join(root, '.data');
  const stackFile = join(dataDir, 'run', 'stack.json');
  const secretsFile = join(dataDir, 'secrets.json');
  const addr =
    process.env.ACCOUNT_GRPC_ADDR ??
    (existsSync(stackFile)
      ? (JSON.parse(readFileSync(stackFile, 'utf8')) as { account_grpc_addr: string }).account_grpc_addr
      : '127.0.0.1:15051');
  // The operator's own credential: production gives it (deploy/secrets/internal_token_operator); development derives it.
  // INTERNAL_TOKEN_FILE: the operator's token as a mounted secret (compose's admin service, the Kubernetes Job).
  const tokenFile = process.env.INTERNAL_TOKEN_FILE;
  const token =
    (tokenFile ? tokenFromFile(tokenFile) : undefined) ??
    process.env.INTERNAL_TOKEN ??
    (existsSync(secretsFile)
      ? componentToken(
          (JSON.parse(readFileSync(secretsFile, 'utf8')) as { internal_token: string }).internal_token,
          'operator',
        )
      : '');
  if (!token) usage('INTERNAL_TOKEN is not set and no development secret exists (run npm start first)');
  return { addr, token };
}

function wholeNumber(flag: string, value: string): number {
  if (!/^\d{1,9}$/.test(value)) usage(`--${flag} must be a whole number (0 = the plan's default)`);
  return Number(value);
}

const accountJson = (a: Account) => ({
  account_id: a.id,
  name: a.name,
  plan: a.plan,
  per_minute_limit: a.per_minute_limit || null,
  per_hour_limit: a.per_hour_limit || null,
});

/** The services whose jobs the CLI runs, each from its build (the image has every dist/). */
const JOB_SERVICES = ['account', 'product', 'license', 'checkout', 'webhook', 'notification'];
const JOB_COMMANDS: Record<string, string[] | undefined> = {
  migrate: undefined,
  migrations: undefined,
  reseal: ['product', 'webhook', 'account'],
  'pepper-usage': ['account'],
  'reset-mfa': ['account'],
};
/** The flags a job takes besides --service. */
const JOB_FLAGS: Record<string, string[] | undefined> = { 'reset-mfa': ['email'] };

/**
 * Under `npm start` (development), what a job needs that the environment does not give: the store npm
 * start uses (.data/run/jobs.json) and the development secrets (.data/secrets.json). Production gives
 * every setting itself, as the service's Deployment does.
 */
function developmentJobEnv(service: string): Record<string, string> {
  const dataDir = process.env.DATA_DIR ?? join(repoRoot(), '.data');
  const jobsFile = join(dataDir, 'run', 'jobs.json');
  const secretsFile = join(dataDir, 'secrets.json');
  if (process.env.MONGO_URL || process.env.MONGO_URL_FILE || !existsSync(jobsFile) || !existsSync(secretsFile))
    return {};
  const run = JSON.parse(readFileSync(jobsFile, 'utf8')) as Record<string, string>;
  const secrets = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, string>;
  return {
    MONGO_URL: run.MONGO_URL,
    MONGO_DB: `${run.DB_PREFIX}_${service}`,
    ...(run.FERRETDB_POSTGRESQL_URL ? { FERRETDB_POSTGRESQL_URL: run.FERRETDB_POSTGRESQL_URL } : {}),
    API_KEY_PEPPER: secrets.api_key_pepper,
    SIGNING_KEY_SECRET: secrets.signing_key_secret,
    WEBHOOK_SECRET_KEY: secrets.webhook_secret_key,
  };
}

/** Runs one job of a service in this process with the settings of the environment. */
async function serviceJob(command: string, flags: Record<string, string>): Promise<void> {
  const own = JOB_FLAGS[command] ?? [];
  for (const f of Object.keys(flags)) if (f !== 'service' && !own.includes(f)) usage(`${command} does not take --${f}`);
  for (const f of own) if (!flags[f]) usage(`${command} needs --${f}`);
  const service = flags.service ?? usage(`${command} needs --service`);
  const allowed = JOB_COMMANDS[command] ?? JOB_SERVICES;
  if (!allowed.includes(service)) usage(`${command}: --service must be one of ${allowed.join(', ')}`);
  const main = require(join(repoRoot(), 'services', service, 'dist', 'main.js')) as Record<string, unknown>;
  const tty = process.stderr.isTTY;
  try {
    const out = await runServiceJob(main[`${service}Service`] as never, command, {
      env: { ...developmentJobEnv(service), ...process.env },
      progress: (line) => process.stderr.write(tty ? `\r${JSON.stringify(line)}` : `${JSON.stringify(line)}\n`),
      args: Object.fromEntries(own.map((f) => [f, flags[f]])),
    });
    if (tty) process.stderr.write('\n');
    console.log(JSON.stringify(out));
    // Values no configured key opens are the operator's to fix (configure that key, run again).
    if (Array.isArray(out.unreadable) && out.unreadable.length) process.exitCode = 1;
  } catch (err) {
    console.error(JSON.stringify({ error: 'job_failed', detail: (err as Error).message }));
    process.exitCode = 1;
  }
}

type AccountCalls = Unary<AccountServiceClient>;

/** Refuses (with the usage) a command this tool does not know, a flag it does not take, or a bad value. */
function checkFlags(command: string, flags: Record<string, string>, files: string[]): void {
  const allowed: Record<string, string[]> = {
    'create-account': ['name', 'plan', 'owner-email'],
    'create-key': ['account', 'scope', 'role', 'name'],
    'revoke-key': ['account', 'key-id'],
    'revoke-all-keys': ['account'],
    'list-keys': ['account', 'state'],
    'set-plan': ['account', 'plan'],
    'set-limits': ['account', 'per-minute', 'per-hour'],
    'set-support-email': ['account', 'email'],
    import: ['account', 'format'],
    export: ['account', 'out'],
    'audit-export': ['account', 'since', 'until'],
  };
  if (!allowed[command]) usage(`unknown command "${command}"`);
  for (const f of Object.keys(flags)) if (!allowed[command].includes(f)) usage(`${command} does not take --${f}`);
  const need = (f: string) => flags[f] ?? usage(`${command} needs --${f}`);
  if (flags.state !== undefined && !['live', 'revoked'].includes(flags.state)) usage('--state must be live or revoked');
  if (command === 'import') {
    if (!importCliFormats.includes(need('format'))) usage(`--format must be one of ${importCliFormats.join(', ')}`);
    if (files.length !== 1) usage('import needs the FILE to import');
    if (!existsSync(files[0]) || !statSync(files[0]).isFile()) usage(`${files[0]} is not a file`);
  }
}

/** Every key in the state asked for, page by page (the service answers at most 100 at a time). */
async function listKeys(accounts: AccountCalls, accountId: string, revoked: boolean) {
  const data: unknown[] = [];
  let r: Awaited<ReturnType<AccountCalls['listApiKeys']>>;
  let cursor = '';
  do {
    r = await accounts.listApiKeys({
      account_id: accountId,
      page: { limit: 100, starting_after: cursor },
      revoked,
    });
    for (const k of r.data)
      data.push({
        id: k.id,
        prefix: k.prefix,
        scope: k.scope,
        name: k.name,
        created_at: k.created_at,
        last_used_at: k.last_used_at || null,
        revoked_at: k.revoked_at || null,
      });
    cursor = r.page?.next_cursor ?? '';
  } while (r.page?.has_more && cursor);
  return { data, live_keys: r.live_keys, max_live_keys: r.max_live_keys };
}

/**
 * audit-export: every entry of the account's audit log within since/until, page by page, one JSON line
 * each (the API's shape), newest first; how many so far on stderr. The service checks the times.
 */
async function auditExport(accounts: AccountCalls, accountId: string, since = '', until = ''): Promise<number> {
  let written = 0;
  let cursor = '';
  for (;;) {
    const r = await accounts.listAuditEvents({
      account_id: accountId,
      page: { limit: 100, starting_after: cursor },
      actor_id: '',
      event_type: '',
      target_id: '',
      since,
      until,
    });
    for (const e of r.data) process.stdout.write(`${JSON.stringify(auditEventJson(e))}\n`);
    written += r.data.length;
    if (written) process.stderr.write(`\raudit entries written: ${written}`);
    cursor = r.page?.next_cursor ?? '';
    if (!r.page?.has_more || !cursor) break;
  }
  if (written) process.stderr.write('\n');
  return written;
}

/** set-limits: either limit or both (a limit not given stays as it is). */
function setLimits(accounts: AccountCalls, flags: Record<string, string>, need: (flag: string) => string) {
  if (flags['per-minute'] === undefined && flags['per-hour'] === undefined)
    usage('set-limits needs --per-minute and/or --per-hour');
  const perMinuteLimit = flags['per-minute'] === undefined ? undefined : wholeNumber('per-minute', flags['per-minute']);
  const perHourLimit = flags['per-hour'] === undefined ? undefined : wholeNumber('per-hour', flags['per-hour']);
  return accounts.updateAccount({
    id: need('account'),
    per_minute_limit: perMinuteLimit,
    per_hour_limit: perHourLimit,
  });
}

/** A failure as one JSON line on stderr, exit code 1. */
function reportFailure(err: unknown, addr: string): void {
  // An answer of the gateway (import, export): its problem details as they came.
  const body = (err as { body?: { code?: string; detail?: string; errors?: unknown } }).body;
  if (body) {
    console.error(
      JSON.stringify({
        error: body.code ?? 'error',
        detail: body.detail,
        ...(body.errors ? { errors: body.errors } : {}),
      }),
    );
    process.exitCode = 1;
    return;
  }
  const e = err instanceof AppError ? err : new AppError('internal', String(err));
  const hint =
    e.code === 'service_unavailable' ? ` (is the system running? npm start; account service expected at ${addr})` : '';
  console.error(
    JSON.stringify({
      error: e.code,
      detail: `${e.message}${hint}`,
      ...(e.fieldErrors.length ? { errors: e.fieldErrors } : {}),
    }),
  );
  process.exitCode = 1;
}

/** A new account and its first key; with --owner-email, its owner member is invited by mail. */
async function createAccount(accounts: AccountCalls, name: string, flags: Record<string, string>) {
  const r = await accounts.createAccount({
    name,
    plan: flags.plan ?? 'free',
    ...(flags['owner-email'] ? { owner_email: flags['owner-email'] } : {}),
  });
  return {
    account_id: r.account!.id,
    api_key: r.secret,
    ...(r.owner_member_id ? { owner_member_id: r.owner_member_id } : {}),
  };
}

async function main() {
  const { command, flags, files } = parseArgs(process.argv.slice(2));
  if (command in JOB_COMMANDS) return serviceJob(command, flags);
  checkFlags(command, flags, files);
  const need = (f: string) => flags[f] ?? usage(`${command} needs --${f}`);

  const { addr, token } = connection();
  const accounts = createClient(AccountServiceClient, addr, { caller: 'operator', token });
  try {
    let out: unknown;
    switch (command) {
      case 'create-account': {
        out = await createAccount(accounts.call, need('name'), flags);
        break;
      }
      case 'create-key': {
        const r = await accounts.call.createApiKey({
          account_id: need('account'),
          // A role alone decides the scope (validate for an app's key); neither is a full admin key.
          scope: flags.scope ?? (flags.role ? '' : 'full'),
          role: flags.role,
          name: flags.name ?? '',
        });
        out = { key_id: r.api_key!.id, api_key: r.secret };
        break;
      }
      case 'revoke-key': {
        const r = await accounts.call.revokeApiKey({ account_id: need('account'), key_id: need('key-id') });
        out = { key_id: r.id, revoked_at: r.revoked_at };
        break;
      }
      case 'set-plan': {
        out = accountJson(await accounts.call.updateAccount({ id: need('account'), plan: need('plan') }));
        break;
      }
      case 'set-limits': {
        out = accountJson(await setLimits(accounts.call, flags, need));
        break;
      }
      case 'set-support-email': {
        const a = await accounts.call.updateAccount({
          id: need('account'),
          support_email: flags.email ?? need('email'),
        });
        out = { ...accountJson(a), support_email: a.support_email || null };
        break;
      }
      case 'revoke-all-keys': {
        const r = await accounts.call.revokeAllApiKeys({ account_id: need('account') });
        out = { revoked: r.revoked };
        break;
      }
      case 'import': {
        out = await runImport(accounts.call, gatewayUrl(), need('account'), flags.format, files[0]);
        break;
      }
      case 'export': {
        out = await runExport(accounts.call, gatewayUrl(), need('account'), flags.out);
        break;
      }
      case 'list-keys': {
        out = await listKeys(accounts.call, need('account'), flags.state === 'revoked');
        break;
      }
      case 'audit-export': {
        await auditExport(accounts.call, need('account'), flags.since, flags.until);
        return;
      }
    }
    console.log(JSON.stringify(out));
  } catch (err) {
    reportFailure(err, addr);
  } finally {
    accounts.close();
  }
}

// What the operator changes is the system's doing in the audit log, named as the operator's.
const OPERATOR = requestOrigin({ type: 'system', id: 'operator', name: 'operator' });

if (require.main === module) void withCallScope('', Number.POSITIVE_INFINITY, main, undefined, OPERATOR);
