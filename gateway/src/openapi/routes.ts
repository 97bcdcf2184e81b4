import type { Express } from 'express';
import { openApiDocument } from './document';
import { referencePage } from './reference-page';

/** GET /openapi.json and GET /docs, public; both built once at start-up. */
export function openApiRoutes(app: Express, version: string): void {
  const doc = openApiDocument(version);
  const json = JSON.stringify(doc);
  const html = referencePage(doc);
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').set('Cache-Control', 'public, max-age=300').send(json);
  });
  app.get('/docs', (_req, res) => {
    res.type('html').set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'").send(html);
  });
}
