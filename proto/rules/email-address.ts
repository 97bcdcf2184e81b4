// How long an e-mail address may be (RFC 5321), declared once: the gateway's request shapes, the shared
// check every service applies (runtime's checkEmail) and the services' own look-ups by e-mail read it.

/** An address has at most this many characters... */
export const EMAIL_MAX_LENGTH = 254;
/** ...and its part before the @ at most this many. */
export const EMAIL_LOCAL_PART_MAX_LENGTH = 64;
