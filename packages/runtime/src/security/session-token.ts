// The shape of a dashboard session token as the account service issues it
// (32 random bytes, base64url): the gateway refuses any other cookie value
// without asking the account service, and the service refuses it again.
export const isSessionToken = (t: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(t);
