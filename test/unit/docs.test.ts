// The documentation a stranger reads: the README stays an introduction, and every relative link in
// the README, docs/, CONTRIBUTING.md and CHANGELOG.md leads to a file (and heading) in the repository.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseServersFile } from '../../src/config/serversFile.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README_MAX_LINES = 220;

function markdownFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join('docs', name));
  return ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...docs];
}

/** The text outside fenced code blocks and inline code, where a `[text](target)` is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Relative link targets of a Markdown file (web addresses and mail links are not checked). */
export function relativeLinks(markdown: string): string[] {
  const targets = [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const withoutCode = markdown.replace(/^```[^]*?^```/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n += 1) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

function brokenLinks(file: string): string[] {
  const markdown = readFileSync(path.join(ROOT, file), 'utf8');
  const broken: string[] = [];
  for (const link of relativeLinks(markdown)) {
    const [target = '', anchor] = link.split('#');
    const resolved = target === '' ? path.join(ROOT, file) : path.resolve(ROOT, path.dirname(file), decodeURI(target));
    if (!resolved.startsWith(ROOT + path.sep) || !existsSync(resolved)) {
      broken.push(`${file}: ${link} (no such file in the repository)`);
      continue;
    }
    if (anchor === undefined || statSync(resolved).isDirectory() || !resolved.endsWith('.md')) continue;
    if (!headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${file}: ${link} (no such heading)`);
  }
  return broken;
}

describe('the documentation', () => {
  it(`keeps README.md at most ${README_MAX_LINES} lines, with the test command`, () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
    expect(readme).toMatch(/^npm test\b/m);
  });

  it('leads with the demo, then the path for your own servers, with an install command that prints no install-scripts warning', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const headings = [...readme.matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    expect(headings.slice(0, 2)).toEqual(['Try the demo', 'Use it with your own servers']);
    expect(headings).not.toContain('Protocol eras');
    expect(readme).toMatch(/^npm install -g --allow-scripts=\. \. /m);
    expect(readme).toMatch(/about 10 minutes on 2 cores; one file: npx vitest run/);
  });

  it('says in CONTRIBUTING how to submit a change', () => {
    expect(readFileSync(path.join(ROOT, 'CONTRIBUTING.md'), 'utf8')).toMatch(/^## Submitting a change$/m);
  });

  it('links only to files and headings that exist in the repository', () => {
    expect(markdownFiles().flatMap(brokenLinks)).toEqual([]);
  });

  it('cites no document outside the repository (design notes, seeds, issues)', () => {
    const outside = /SPEC §|\bseed \d{3}\b|\.\.\/shared\b|the issue's/;
    const citing = markdownFiles().filter((file) => outside.test(readFileSync(path.join(ROOT, file), 'utf8')));
    expect(citing).toEqual([]);
  });

  it('shows only servers.yaml snippets that pass the schema, and pass each known server the env var it reads', () => {
    const snippets = markdownFiles().flatMap((file) =>
      [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/^```yaml\n([^]*?)^```/gm)]
        .map((match) => match[1]!)
        .filter((text) => /^servers:/m.test(text))
        .map((text) => ({ file, text })),
    );
    expect(snippets.length).toBeGreaterThan(3);
    for (const { file, text } of snippets) {
      const { servers } = parseServersFile(text, file).config;
      for (const server of Object.values(servers)) {
        // @modelcontextprotocol/server-github reads GITHUB_PERSONAL_ACCESS_TOKEN and nothing else.
        if (server.type === 'stdio' && server.args.some((arg) => arg.includes('server-github')))
          expect(Object.keys(server.env), file).toContain('GITHUB_PERSONAL_ACCESS_TOKEN');
      }
    }
  });

  it('finds a broken link, a missing heading and a link that leaves the repository', () => {
    expect(relativeLinks('[a](docs/none.md) [b](https://example.com) `[c](x.md)` [d](#here)')).toEqual(['docs/none.md', '#here']);
    expect(headingAnchors('# Title\n## `--json` output\n## Title\n```\n# not a heading\n```')).toEqual(
      new Set(['title', '--json-output', 'title-1']),
    );
  });
});
