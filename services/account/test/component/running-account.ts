import { AccountServiceClient } from '@licensing/proto';
import { createClient } from '@licensing/runtime';
import { stopAndDrop } from '@licensing/test-support';
import { start } from '../../src/main';
import { credentialOf, envFor, type Topology } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { testTopology } from '../../../../test/support/stack';
import { signupToken, waitForMail } from '../../../../test/support/mailbox';

// The account service alone, as its component tests run it: over real FerretDB and NATS (the event
// stream set up as deployments set it up), with a client for each caller it serves, each with that
// caller's credential (what src/access.ts lets that caller do).

export type AccountClient = ReturnType<typeof createClient<AccountServiceClient>>;

export interface RunningAccount {
  topology: Topology;
  port: number;
  /** The operator CLI's client. */
  operator: AccountClient;
  /** The gateway's client. */
  gateway: AccountClient;
  /** The web component's (the dashboard's) client. */
  web: AccountClient;
  /** Stops the service and drops its database. */
  stop(): Promise<void>;
}

/** A person signed up through the e-mailed link (the service's mail folder), with the session it opened. */
export async function signUpPerson(svc: RunningAccount, password: string, prefix = 'person', accountName = 'Acme Inc') {
  const email = `${prefix}-${Math.random().toString(36).slice(2, 10)}@example.com`;
  await svc.web.call.signUp({ account_name: accountName, email, password });
  const session = await svc.web.call.confirmSignUp({ token: signupToken(await waitForMail(svc.topology, email)) });
  return { email, session };
}

/** `env`: settings beyond the topology's (a short job interval, a retention). */
export async function startAccount(
  t: Topology = testTopology(),
  env: Record<string, string> = {},
): Promise<RunningAccount> {
  await setUpEvents(t);
  const service = await start({ env: { ...envFor('account', t, { port: 0 }), ...env } });
  const as = (caller: 'operator' | 'gateway' | 'web') =>
    createClient(AccountServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, caller));
  const operator = as('operator');
  const gateway = as('gateway');
  const web = as('web');
  return {
    topology: t,
    port: service.port,
    operator,
    gateway,
    web,
    async stop() {
      operator.close();
      gateway.close();
      web.close();
      await stopAndDrop('the account service', service);
    },
  };
}
