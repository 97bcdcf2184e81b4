import { int, serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const notificationSchema = {
  ...serviceSchema('notification', 15056),
  ACCOUNT_GRPC_ADDR: str("Account service address (host:port), for the vendor's name and support e-mail", {
    default: '127.0.0.1:15051',
  }),
  PRODUCT_GRPC_ADDR: str('Product service address (host:port), for the product of a purchase e-mail', {
    default: '127.0.0.1:15052',
  }),
  LICENSE_GRPC_ADDR: str('Licence service address (host:port), for the licence and its signed licence file', {
    default: '127.0.0.1:15053',
  }),
  MAIL_URL: str(
    'Where customer e-mails go: smtp://<user>:<password>@host:587, smtps://…:465, or dir:///folder (one JSON file per mail, development). Empty: mail stays queued',
    { default: '', secret: true },
  ),
  MAIL_FROM_ADDRESS: str(
    "Sender address of customer e-mails; the display name is the vendor's account name, and replies go to its support e-mail",
    { default: 'no-reply@localhost' },
  ),
  PUBLIC_BASE_URL: str('Public address of the gateway, for the portal link in e-mails', {
    default: 'http://127.0.0.1:8080',
  }),
  MAIL_RETRY_SCHEDULE_S: str(
    'Seconds between attempts of a mail, comma-separated (shorter only in tests); after the last, its last wait again and again until MAIL_MAX_AGE_S',
    { default: '10,60,300,1800,7200,21600,43200' },
  ),
  MAIL_MAX_AGE_S: int(
    'A mail still not sent this many seconds after it was asked is failed (one last attempt is made at that age); until then a mail server that is away only delays it',
    { default: 259_200, min: 1, max: 31_536_000 },
  ),
  MAIL_SEND_INTERVAL_MS: int(
    'How often queued mail that is due is looked for: retries and what another instance queued (mail this instance queues is sent at once)',
    { default: 5000, min: 20 },
  ),
  MAIL_SEND_TIMEOUT_MS: int(
    'An SMTP exchange (and the look-ups before it) that has not finished within this is a failed attempt; never more than SHUTDOWN_TIMEOUT_MS (a larger value is lowered to it, with a warning), so a graceful stop can wait for the mail being sent',
    { default: 8000, min: 200, max: 120_000 },
  ),
  MAIL_SEND_CONCURRENCY: int(
    'Mails one instance has in flight at once (look-ups and SMTP exchange each); due mail is taken lowest turn first, a round-robin by account',
    { default: 4, min: 1, max: 32 },
  ),
  PORTAL_SIGNINS_PER_EMAIL: int(
    'Customer portal sign-in links sent to one e-mail of one account per rolling hour; only links that go out count (a request for an address that holds no licence, or a repeat within the minute, sends nothing and counts nothing); past it a request sends nothing',
    { default: 5, min: 1, max: 100 },
  ),
  PORTAL_CLEANUP_INTERVAL_MS: int(
    'How often expired sign-in links and portal sessions are deleted (a bounded batch each time; reads ignore expired ones anyway)',
    { default: 60_000, min: 20, max: 3_600_000 },
  ),
};

export type NotificationConfig = ConfigOf<typeof notificationSchema>;
