// Byte helpers on web platform APIs only (atob, TextEncoder), so the SDK runs
// unchanged in Node ≥ 20, browsers and Electron without Buffer.

/** Standard or URL-safe base64, padded or not, to bytes. Throws TypeError on anything else. */
export function base64ToBytes(input: string): Uint8Array<ArrayBuffer> {
  const standard = input.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/]*$/.test(standard) || standard.length % 4 === 1) throw new TypeError('not valid base64');
  const binary = atob(standard + '='.repeat((4 - (standard.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;
}

/** The DER bytes inside a PEM block with the given label, e.g. PUBLIC KEY. */
export function pemToDer(pem: string, label: string): Uint8Array<ArrayBuffer> {
  const match = new RegExp(`-----BEGIN ${label}-----([\\s\\S]+?)-----END ${label}-----`).exec(pem);
  if (!match) throw new TypeError(`not a PEM "${label}" block`);
  return base64ToBytes(match[1].replace(/\s+/g, ''));
}
