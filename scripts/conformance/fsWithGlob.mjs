// node:fs plus globSync, for Node 20 (globSync arrived in Node 22). nodeShim.mjs points the
// conformance suite's `import … from "fs"` here. A small recursive glob: `**`, `*` and `?`, enough
// for the suite's one use (`**/checks.json`).
import fs from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export default fs;

function patternToRegExp(pattern) {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '*' && pattern[i + 1] === '*') {
      // `**/` matches zero or more whole directories.
      const slash = pattern[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** fs.globSync(patterns, { cwd }) → matching paths relative to cwd. */
export function globSync(patterns, options = {}) {
  if (typeof fs.globSync === 'function') return fs.globSync(patterns, options);
  const cwd = options.cwd ? String(options.cwd) : process.cwd();
  const matchers = (Array.isArray(patterns) ? patterns : [patterns]).map(patternToRegExp);
  const found = [];
  const walk = (relative) => {
    for (const entry of fs.readdirSync(path.join(cwd, relative), { withFileTypes: true })) {
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      if (matchers.some((matcher) => matcher.test(name))) found.push(name);
      if (entry.isDirectory()) walk(name);
    }
  };
  walk('');
  return found;
}
