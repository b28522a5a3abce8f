/**
 * mysql_native_password: the client proves it knows the password with
 * SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))).
 * @see https://mariadb.com/kb/en/connection/#mysql_native_password-plugin
 */
import { createHash } from 'node:crypto';

export const NATIVE_PASSWORD_PLUGIN = 'mysql_native_password';

export function nativePasswordScramble(password: string, scramble: Buffer): Buffer {
  if (password === '') return Buffer.alloc(0);
  const sha1 = (data: Buffer): Buffer => createHash('sha1').update(data).digest();
  const stage1 = sha1(Buffer.from(password, 'utf8'));
  const stage2 = sha1(stage1);
  const mix = sha1(Buffer.concat([scramble, stage2]));
  return Buffer.from(stage1.map((byte, i) => byte ^ mix[i]!));
}
