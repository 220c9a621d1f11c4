import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

// The clone stands alone: what a reader needs is in the repository, and every path a document points to is
// one a fresh clone has. Pure file checks over `git ls-files` (what a clone gets), no service.

const ROOT = join(__dirname, '..', '..');
/** Written in two halves so that this file does not name it. */
const OUTSIDE_FOLDER = ['..', 'shared'].join('/');

const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

/** The tracked files that are on disk (a clone's files; a tracked link is not followed), and every folder holding one. */
function repository(): { files: Set<string>; folders: Set<string> } {
  const files = new Set(git('ls-files', '-z').split('\0').filter((f) => f && existsSync(join(ROOT, f)) && lstatSync(join(ROOT, f)).isFile()));
  const folders = new Set<string>();
  for (const f of files) {
    const parts = f.split('/');
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'));
  }
  return { files, folders };
}

const ignoredCache = new Map<string, boolean>();
/** The paths among `paths` that .gitignore keeps out of the repository (a folder named with its trailing `/`). */
function ignored(paths: string[]): Set<string> {
  const ask = [...new Set(paths.filter((p) => !ignoredCache.has(p)))];
  if (ask.length > 0) {
    const r = spawnSync('git', ['check-ignore', '--stdin', '-z'], { cwd: ROOT, input: ask.join('\0'), encoding: 'utf8' });
    const yes = new Set(r.stdout.split('\0').filter(Boolean));
    for (const p of ask) ignoredCache.set(p, yes.has(p));
  }
  return new Set(paths.filter((p) => ignoredCache.get(p)));
}

/** A heading's anchor as GitHub makes it: lower case, every character but letters, digits, `_`, `-` and spaces dropped, spaces to `-`. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
    .replace(/<[^>]+>/g, '') // HTML tags
    .replace(/`/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

interface Mention {
  line: number;
  target: string;
}

interface MarkdownFacts {
  /** The anchors of its headings, duplicates numbered as GitHub numbers them (`-1`, `-2`). */
  anchors: Set<string>;
  /** `[text](target)`, `![alt](target)` and `[id]: target`, outside code. */
  links: Mention[];
  /** Inline code spans, outside fenced blocks (where documents name files). */
  code: Mention[];
}

/** What a markdown text links to, names in code spans and offers as anchors. Fenced code blocks are skipped. */
export function readMarkdown(text: string): MarkdownFacts {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const links: Mention[] = [];
  const code: Mention[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(raw);
    if (fence) {
      if (opening && opening[1][0] === fence[0] && opening[1].length >= fence.length) fence = null;
      return;
    }
    if (opening) {
      fence = opening[1];
      return;
    }
    for (const m of raw.matchAll(/(`+)(.+?)\1/g)) code.push({ line, target: m[2].trim() });
    const prose = raw.replace(/(`+)(.+?)\1/g, (m) => 'x'.repeat(m.length));
    const heading = /^ {0,3}#{1,6}\s+(.*?)(\s+#+)?\s*$/.exec(raw);
    if (heading) {
      const slug = githubSlug(heading[1]);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+["'(][^)]*)?\)/g)) links.push({ line, target: m[1] });
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)/.exec(prose);
    if (definition) links.push({ line, target: definition[1] });
  });
  return { anchors, links, code };
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** Where a relative target of `from` leads, from the repository's root (leading `/`: the root itself, as GitHub reads it). */
function resolveFrom(from: string, target: string): string {
  const path = decodeURIComponent(target);
  return posix.normalize(path.startsWith('/') ? path.slice(1) : posix.join(posix.dirname(from), path)).replace(/(.)\/$/, '$1');
}
const outside = (resolved: string): boolean => resolved === '..' || resolved.startsWith('../');

interface Problem {
  at: string;
  problem: string;
}

/** Every broken, outside or ignored link and cited path of the markdown `files` (path -> text) against `repo`. */
export function checkMarkdown(files: Map<string, string>, repo: { files: Set<string>; folders: Set<string> }, isIgnored: (paths: string[]) => Set<string>) {
  const facts = new Map([...files].map(([path, text]) => [path, readMarkdown(text)]));
  const problems: Problem[] = [];
  let links = 0;
  let cited = 0;
  const pending: { at: string; path: string; target: string }[] = [];
  // One question to git for every path named in code, rather than one each.
  const named = [...facts.values()].flatMap((f) => f.code.map((c) => c.target.replace(/[,;:.)]+$/, '').replace(/[#:].*$/, '').replace(/\/$/, '')));
  isIgnored(named.flatMap((p) => [p, `${p}/`, `${p.split('/')[0]}/`]));
  for (const [md, { links: mentions, code }] of facts) {
    for (const { line, target } of mentions) {
      const at = `${md}:${line}`;
      if (isExternal(target)) continue;
      links++;
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = pathPart === '' ? md : resolveFrom(md, pathPart);
      if (outside(resolved)) {
        problems.push({ at, problem: `${target}: leads outside the repository` });
        continue;
      }
      const isFile = repo.files.has(resolved);
      if (!isFile && !repo.folders.has(resolved)) {
        pending.push({ at, path: resolved, target });
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md')) {
        const anchors = facts.get(resolved)?.anchors ?? readMarkdown(readFileSync(join(ROOT, resolved), 'utf8')).anchors;
        if (!anchors.has(anchor.toLowerCase())) problems.push({ at, problem: `${target}: no heading of ${resolved} has the anchor #${anchor}` });
      }
    }
    for (const { line, target } of code) {
      const at = `${md}:${line}`;
      const token = target.replace(/[,;:.)]+$/, '');
      if (/\s/.test(token) || isExternal(token)) continue;
      if (token.startsWith('../') && outside(resolveFrom(md, token))) {
        problems.push({ at, problem: `${token}: names a path outside the repository` });
        continue;
      }
      // Paths from the root: their first folder is one of the repository's (or one it ignores).
      const first = token.split('/')[0];
      if (!token.includes('/') || first === '' || first === '..' || first === '.') continue;
      const path = token.replace(/[#:].*$/, '').replace(/\/$/, '');
      const topLevel = repo.folders.has(first) || isIgnored([`${first}/`]).size > 0;
      if (!topLevel) continue;
      cited++;
      const pattern = /[<>*{}$]/.test(path);
      if (isIgnored([path, `${path}/`]).size > 0) {
        // The ignored folder itself may be named (where a command writes); a file in it only as a pattern.
        if (!pattern && path !== first) problems.push({ at, problem: `${token}: cites a file under a git-ignored folder, which a clone does not have (commit a summary under docs/, or give the command that makes it)` });
        continue;
      }
      if (!pattern && !repo.files.has(path) && !repo.folders.has(path)) {
        problems.push({ at, problem: `${token}: no tracked file or folder has this path` });
      }
    }
  }
  const ignoredTargets = isIgnored(pending.map((p) => p.path));
  for (const p of pending) {
    problems.push({ at: p.at, problem: ignoredTargets.has(p.path) ? `${p.target}: leads to a git-ignored path, which a clone does not have` : `${p.target}: no tracked file or folder at ${p.path}` });
  }
  return { problems: problems.map((p) => `${p.at}: ${p.problem}`), links, cited };
}

describe('the clone stands alone: nothing in the repository points outside it, and every link in its documents leads somewhere', () => {
  const repo = repository();
  const markdown = new Map([...repo.files].filter((f) => f.endsWith('.md')).map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));

  it(`no tracked file names ${OUTSIDE_FOLDER} (a folder beside the repository, which a clone does not have)`, () => {
    const offenders: string[] = [];
    for (const file of repo.files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      if (!text.includes(OUTSIDE_FOLDER)) continue;
      text.split('\n').forEach((line, i) => line.includes(OUTSIDE_FOLDER) && offenders.push(`${file}:${i + 1}: ${line.trim()}`));
    }
    expect(repo.files.size).toBeGreaterThan(100);
    expect(offenders).toEqual([]);
  });

  it('every relative link of a tracked markdown file leads to a tracked file or folder inside the repository (never an ignored one), every #anchor to a heading of its file, and every repository path a document names in code exists (files under an ignored folder only as a pattern)', () => {
    const { problems, links, cited } = checkMarkdown(markdown, repo, ignored);
    expect(markdown.has('README.md')).toBe(true);
    expect(links).toBeGreaterThan(10);
    expect(cited).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });

  describe('the check itself', () => {
    const tiny = { files: new Set(['README.md', 'docs/A.md', 'docs/img/x.png']), folders: new Set(['docs', 'docs/img']) };
    const ignoresReports = (paths: string[]) => new Set(paths.filter((p) => p === 'reports' || p.startsWith('reports/')));
    const run = (readme: string, a = '# A\n\n## Two words, one comma\n\n## Two words, one comma\n') =>
      checkMarkdown(new Map([['README.md', readme], ['docs/A.md', a]]), tiny, ignoresReports).problems;

    it('makes anchors as GitHub does (punctuation dropped, code kept, duplicates numbered)', () => {
      expect(githubSlug('Several processes, several hosts')).toBe('several-processes-several-hosts');
      expect(githubSlug('Reason `card_mismatch`: the partner\'s card does not match the order')).toBe('reason-card_mismatch-the-partners-card-does-not-match-the-order');
      expect(githubSlug('Control API (only when `SIM_CONTROL=true`; otherwise `/_sim/*` is 404)')).toBe('control-api-only-when-sim_controltrue-otherwise-_sim-is-404');
      expect([...readMarkdown('# X\n## X\n```\n# not a heading\n```\n').anchors]).toEqual(['x', 'x-1']);
    });

    it('accepts links to files, folders and headings that exist, and skips code blocks and URLs', () => {
      expect(run('[a](docs/A.md#two-words-one-comma) [b](docs/A.md#two-words-one-comma-1) [c](docs/) ![i](docs/img/x.png) [u](https://example.com/x)\n```\n[no](nowhere.md)\n```\n')).toEqual([]);
    });

    it('refuses a link outside the repository, to a missing file, to a missing heading, or to an ignored path', () => {
      const problems = run(`[s](${OUTSIDE_FOLDER}/X.md) [m](docs/B.md) [h](docs/A.md#three) [r](reports/run.json) [self](#nowhere)\n`);
      expect(problems).toEqual([
        `README.md:1: ${OUTSIDE_FOLDER}/X.md: leads outside the repository`,
        'README.md:1: docs/A.md#three: no heading of docs/A.md has the anchor #three',
        'README.md:1: #nowhere: no heading of README.md has the anchor #nowhere',
        'README.md:1: docs/B.md: no tracked file or folder at docs/B.md',
        'README.md:1: reports/run.json: leads to a git-ignored path, which a clone does not have',
      ]);
    });

    it('refuses a path named in code that is missing, outside, or a file under an ignored folder; a pattern there is fine', () => {
      const problems = run('`docs/A.md` `docs/img/` `reports/` `reports/run-<stamp>.json` `docs/C.md` `reports/run-1.json` `../../x.md`\n');
      expect(problems).toEqual([
        'README.md:1: docs/C.md: no tracked file or folder has this path',
        'README.md:1: reports/run-1.json: cites a file under a git-ignored folder, which a clone does not have (commit a summary under docs/, or give the command that makes it)',
        'README.md:1: ../../x.md: names a path outside the repository',
      ]);
    });
  });
});
