import { VISITOR_ACTOR_ID, type AccountActionData, type AccountActionType } from '@licensing/proto';
import { newEnvelope } from '@licensing/runtime';

// An action a person takes about their own sign-in (signing in, a password, joining): the audit log
// names them as the actor. The dashboard's pages before a session (sign-in, a reset or invitation link)
// say only where the request came from (address, agent) and call the person a visitor: here the visitor
// becomes the person the action is about, keeping the address and agent.

export function personAction(
  type: AccountActionType,
  person: { _id: string; account_id: string; email: string },
  now: Date,
  data: AccountActionData = { user: { id: person._id, email: person.email } },
) {
  const event = newEnvelope(type, person.account_id, data, now);
  const origin = event.origin;
  if (origin && origin.actor.id !== VISITOR_ACTOR_ID) return event;
  return {
    ...event,
    origin: { ...origin, actor: { type: 'member' as const, id: person._id, name: person.email } },
  };
}
