import { checkEmail, newEnvelope, type Clock } from '@licensing/runtime';
import type { AccountActionEvent } from '@licensing/proto';
import type { PeopleStore } from '../store/queries';

// The operator's way back in for a person who lost both their phone and every recovery code: their
// two-factor sign-in is turned off (recorded as mfa.disabled by the system, through their outbox, which
// the running service publishes). An admin's members can be removed and invited again instead; the
// owner's membership cannot, so this is the owner's way out.

export async function resetMfaJob(people: PeopleStore, clock: Clock, email: string) {
  const address = checkEmail('email', email).toLowerCase();
  const user = await people.findUserByEmail(address);
  if (!user) throw new Error(`nobody signs in with ${address}`);
  if (!user.mfa) return { email: address, reset: false, detail: 'two-factor sign-in was not on' };
  // No request: no origin, so the audit log names the system as the actor.
  const action = newEnvelope(
    'mfa.disabled',
    user.account_id,
    { user: { id: user._id, email: user.email } },
    clock.now(),
  );
  await people.disableMfa(user._id, action as AccountActionEvent);
  return { email: address, reset: true };
}
