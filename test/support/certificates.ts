/**
 * Self-signed certificates for the TLS tests, made with openssl (scripts/setup.sh installs it),
 * for 127.0.0.1 and localhost.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

/** Writes a new key to `keyFile` and its self-signed certificate to `certFile`. */
export function makeCertificate(certFile: string, keyFile: string): void {
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(
    made.status,
    0,
    `openssl could not make a certificate (scripts/setup.sh installs it): ${made.error?.message ?? made.stderr}`,
  );
}
