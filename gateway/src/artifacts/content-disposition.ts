/**
 * Content-Disposition naming a download: an ASCII fallback plus the exact UTF-8 name (RFC 6266 with
 * RFC 8187's filename*), for the gateway's own answers and the store's presigned ones alike.
 */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
