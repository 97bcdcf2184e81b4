import type { Handlers } from '@licensing/runtime';
import type { ImportServiceService } from '@licensing/proto';
import {
  appendExportChunk,
  createExport,
  exportLicenses,
  finishExport,
  getExport,
  presentExport,
  readExportChunk,
  renewExport,
  type ExportDeps,
} from '../use-cases/exports';
import {
  abandonImport,
  appendImportChunk,
  createImport,
  getImport,
  presentImport,
  startImport,
  type ImportDeps,
} from '../use-cases/imports';

// Proto to use case and back; the rules live in use-cases/imports.ts, exports.ts and domain/import-*.ts.
export function importHandlers(
  deps: ImportDeps & ExportDeps,
  started: () => void,
): Handlers<typeof ImportServiceService> {
  const present = (doc: Parameters<typeof presentExport>[0]) => presentExport(doc, deps.exportLeaseMs);
  return {
    createImport: async (req) => presentImport(await createImport(deps, req.account_id, req.format)),
    appendImportChunk: async (req) =>
      presentImport(await appendImportChunk(deps, req.account_id, req.import_id, req.seq, req.data)),
    async startImport(req) {
      const doc = await startImport(deps, req.account_id, req.id);
      started();
      return presentImport(doc);
    },
    abandonImport: async (req) => presentImport(await abandonImport(deps, req.account_id, req.id)),
    getImport: async (req) => presentImport(await getImport(deps, req.account_id, req.id)),
    createExport: async (req) => present(await createExport(deps, req.account_id)),
    appendExportChunk: async (req) =>
      present(await appendExportChunk(deps, req.account_id, req.export_id, req.seq, req.data, req.counts)),
    renewExport: async (req) => present(await renewExport(deps, req.account_id, req.id)),
    finishExport: async (req) => present(await finishExport(deps, req.account_id, req.export_id, req.failure)),
    getExport: async (req) => present(await getExport(deps, req.account_id, req.id)),
    readExportChunk: async (req) => ({ data: await readExportChunk(deps, req.account_id, req.export_id, req.seq) }),
    exportLicenses: async (req) => exportLicenses(deps, req.account_id, req.after, req.limit),
  };
}
