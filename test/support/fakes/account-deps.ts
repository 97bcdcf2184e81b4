import type { AccountDeps, PeopleDeps } from '../../../services/account/src/use-cases/deps';
import { parsePeppers } from '../../../services/account/src/domain/api-key';
import { FakeClock, RecordingOutbox } from './common';
import { FakeAccountStore, FakePeopleStore, RecordingMailer } from './account-stores';

export const PEPPER = 'unit-test-pepper';

/** The account service's use cases over in-memory stores, a recording mailer and a clock that moves when told. */
export function accountSetup() {
  const store = new FakeAccountStore();
  const people = new FakePeopleStore(store);
  const outbox = new RecordingOutbox();
  const clock = new FakeClock();
  const mailer = new RecordingMailer();
  const warnings: unknown[] = [];
  const log = { warn: (obj: unknown) => void warnings.push(obj) } as unknown as AccountDeps['log'];
  const deps: AccountDeps = { store, outbox, clock, pepper: parsePeppers(PEPPER), log };
  const peopleDeps: PeopleDeps = { accounts: store, people, mailer, clock, baseUrl: 'https://licensing.example' };
  return { store, people, outbox, clock, mailer, warnings, deps, peopleDeps };
}
