import type { ImportServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/** Imports and exports (the transfer module's ImportService): the gateway streams files in and runs exports; nobody else. */
export const importAccess: AccessPolicyOf<typeof ImportServiceService> = {
  gateway: [
    'createImport',
    'appendImportChunk',
    'startImport',
    'abandonImport',
    'getImport',
    'createExport',
    'appendExportChunk',
    'renewExport',
    'finishExport',
    'getExport',
    'readExportChunk',
    'exportLicenses',
  ],
};
