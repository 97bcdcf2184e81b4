import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '@licensing/runtime';

// The gateway's own download links, for files it serves itself (the file store): a capability that
// names one stored file and works until it expires, signed so it cannot be made or changed. Every
// gateway derives the same key from its internal token, so any of them serves a link another made, and
// nothing new needs deploying; rotating the token ends the links in flight (they last 5 minutes).

/** What a link names: the stored file, the name it downloads as, and when it stops working (epoch s). */
export interface LinkTarget {
  key: string;
  filename: string;
  expires: number;
}

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export class DownloadLinks {
  private readonly secret: Buffer;

  constructor(internalToken: string) {
    this.secret = createHmac('sha256', internalToken).update('licensing download links v1').digest();
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest();
  }

  /** The token of a link: base64url(JSON) "." base64url(HMAC-SHA256). */
  sign(target: LinkTarget): string {
    const payload = b64(JSON.stringify({ k: target.key, f: target.filename, e: target.expires }));
    return `${payload}.${b64(this.mac(payload))}`;
  }

  /**
   * The file a token names: not_found for one that was not made here or was changed (compared in
   * constant time), gone (410) once it has expired.
   */
  verify(token: string, nowMs: number): LinkTarget {
    const dot = token.indexOf('.');
    const payload = token.slice(0, dot);
    const sent = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = this.mac(payload);
    if (dot < 1 || sent.length !== expected.length || !timingSafeEqual(sent, expected))
      throw AppError.notFound('download link');
    const { k, f, e } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof k !== 'string' || typeof f !== 'string' || typeof e !== 'number')
      throw AppError.notFound('download link');
    if (e * 1000 <= nowMs)
      throw new AppError('gone', 'this download link has expired (links work for 5 minutes): ask for the file again');
    return { key: k, filename: f, expires: e };
  }
}
