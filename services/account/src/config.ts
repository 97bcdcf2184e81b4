import { int, serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const accountSchema = {
  ...serviceSchema('account', 15051),
  API_KEY_PEPPER: str(
    'Server secret for the HMAC digest of API keys: one value, or id:pepper entries (comma- or newline-separated) while it is rotated, the first digesting new keys and each verifying the keys made with it (docs/operations.md, "Rotating secrets"); dropping a pepper invalidates the keys made with it',
    {
      secret: true,
    },
  ),
  MAIL_URL: str(
    'Where sign-up e-mails go: smtp://<user>:<password>@host:587, smtps://…:465, or dir:///folder (one JSON file per mail, development). Empty: dashboard sign-up is closed',
    { default: '', secret: true },
  ),
  MAIL_FROM: str('Sender of sign-up e-mails', { default: 'Licensing <no-reply@localhost>' }),
  PUBLIC_BASE_URL: str('Public address of the gateway, for the links in e-mails', { default: 'http://127.0.0.1:8080' }),
  AUDIT_RETENTION_DAYS: int('How many days audit log entries are kept; older ones are removed by a job', {
    default: 400,
    min: 1,
    max: 36_500,
  }),
  AUDIT_RETENTION_INTERVAL_MS: int('How often the audit log job removes the entries past AUDIT_RETENTION_DAYS', {
    default: 3_600_000,
    min: 50,
    max: 86_400_000,
  }),
};

export type AccountConfig = ConfigOf<typeof accountSchema>;
