// Node 20 lacks fs.globSync, which the harness imports at the top of one module
// (tier-check, never run here); tinyglobby stands in for it.
import fs from 'node:fs';
import { globSync as tinyGlobSync } from 'tinyglobby';
export * from 'node:fs';
export default fs;
export function globSync(pattern, options = {}) {
  return tinyGlobSync(pattern, { cwd: options.cwd, dot: true, onlyFiles: false });
}
