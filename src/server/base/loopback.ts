// Which host names and addresses only this machine can reach: the bind's
// exposure warning and the HTTP edge's Host check ask the same question.
import { isIP } from 'node:net';

/** True when `host` can only be reached from this machine. */
export function isLoopbackHost(host: string): boolean {
  const lower = host.toLowerCase();
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true;
  if (isIP(lower) === 4) return lower.startsWith('127.');
  if (isIP(lower) === 6) return lower === '::1' || /^(?:0{0,4}:){1,7}0{0,3}1$/.test(lower) || /^::ffff:127\./.test(lower);
  return false;
}
