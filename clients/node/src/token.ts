import { randomBytes } from 'node:crypto';

/** A lease token: 24 bytes from the CSPRNG, base64url without padding (32 characters). */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}
