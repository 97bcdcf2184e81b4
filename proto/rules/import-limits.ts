// The limits of an import's or an export's file, declared once: the gateway streams the file and refuses
// a larger one (413) before the licence service, which stores it, refuses it on its own.

/** The largest file an import takes (the gateway's IMPORT_MAX_BYTES may only lower it). */
export const MAX_IMPORT_BYTES = 100 * 1024 * 1024;

/** The largest piece of an import's or an export's file one gRPC call carries. */
export const MAX_FILE_PIECE_BYTES = 1024 * 1024;
