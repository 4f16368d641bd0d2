/** What the ledger records of a file a step carried: its name, size, SHA-256 and where it is. */
import { createHash } from 'node:crypto';

export interface FileEvidence {
  /** The file's name (`invoice-INV-2041.pdf`). */
  name: string;
  size: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
  /** Its path in the team's volume (`tenants/<tenant>/jobs/<job>/<name>`). */
  path: string;
  [field: string]: string | number;
}

/** Hex SHA-256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The evidence of `bytes` kept at `path` under `name`. */
export function fileEvidence(name: string, path: string, bytes: Uint8Array): FileEvidence {
  return { name, size: bytes.length, sha256: sha256Hex(bytes), path };
}
