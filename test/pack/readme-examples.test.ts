// How the pack check reads the README's examples (scripts/readme-examples.ts).
// The examples themselves run in the pack check (`npm run test:pack`).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleFiles, examplePages, movePorts, readmeFiles } from '../../scripts/readme-examples.js';

const fence = '```';
const markdown = [
  '# Title',
  `${fence}ts`,
  '// playwright.config.ts',
  "export default { use: { baseURL: 'http://127.0.0.1:3000' } };",
  fence,
  `${fence}ts`,
  "import { test } from 'mailroomjs/vitest'; // a fragment: no path, not a file",
  fence,
  `${fence}sh`,
  '// not/typescript.ts',
  fence,
  `${fence}ts`,
  '// test/signup.test.ts',
  "test('x', () => {});",
  fence,
].join('\n');

describe('readmeFiles', () => {
  it('takes each ts block headed by a path comment as that whole file, and nothing else', () => {
    expect(readmeFiles(markdown)).toEqual([
      {
        path: 'playwright.config.ts',
        page: 'README.md',
        line: 3,
        text: "// playwright.config.ts\nexport default { use: { baseURL: 'http://127.0.0.1:3000' } };\n",
      },
      { path: 'test/signup.test.ts', page: 'README.md', line: 13, text: "// test/signup.test.ts\ntest('x', () => {});\n" },
    ]);
  });

  it('refuses a file given twice, a path out of the project, and an unclosed block', () => {
    expect(() => readmeFiles(`${markdown}\n${fence}ts\n// test/signup.test.ts\n${fence}`)).toThrow(
      'README.md line 17: test/signup.test.ts was already given on line 13; a file is one block',
    );
    expect(() => readmeFiles(`${fence}ts\n// ../outside.ts\n${fence}`)).toThrow('README.md line 2: ../outside.ts leaves the project');
    expect(() => readmeFiles(`${fence}ts\n// a.ts\n`)).toThrow('README.md: the code block opened on line 1 is never closed');
  });

  it("finds the README's own project: both runners' configs, the Vitest setup and a test of each", () => {
    const paths = readmeFiles(readFileSync(new URL('../../README.md', import.meta.url), 'utf8')).map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining(['playwright.config.ts', 'e2e/signup.spec.ts', 'vitest.config.ts', 'test/mailroom.setup.ts', 'test/signup.test.ts']),
    );
  });
});

describe("the README's Playwright config", () => {
  const config = readmeFiles(readFileSync(new URL('../../README.md', import.meta.url), 'utf8')).find((f) => f.path === 'playwright.config.ts')!.text;

  it('leaves apiURL to MAILROOM_API_URL: one set in the config wins over the variable, so a CI job could not move it', () => {
    expect(config).not.toMatch(/\bapiURL\s*:/);
  });

  it("reuses a running app and mail server off CI, and on CI with REUSE_SERVERS=1 (the CI guide's shards side by side)", () => {
    expect(config).toContain("const reuseExistingServer = !process.env.CI || process.env.REUSE_SERVERS === '1';");
    expect(config).toContain('mailroomWebServer({ smtpPort: 2525, httpPort: 8025, reuseExistingServer })');
    expect(config).toMatch(/command: 'npm start', url: 'http:\/\/127\.0\.0\.1:3000', reuseExistingServer,/);
  });
});

describe('exampleFiles', () => {
  const root = new URL('../..', import.meta.url).pathname;

  it('reads the README and every guide in docs/, not the generated API reference', () => {
    const pages = examplePages(root);
    expect(pages[0]).toBe('README.md');
    expect(pages).toEqual(expect.arrayContaining(['docs/getting-started-vitest.md', 'docs/smtp-deferral-lab.md']));
    expect(pages.some((page) => page.startsWith('docs/api/'))).toBe(false);
  });

  it("holds each guide's examples beside the README's, each path shown by one page", () => {
    const files = exampleFiles(root);
    expect(new Set(files.map((f) => f.path)).size).toBe(files.length);
    expect(files.find((f) => f.path === 'e2e/greylisting.spec.ts')?.page).toBe('docs/smtp-deferral-lab.md');
    expect(files.find((f) => f.path === 'test/signup.test.ts')?.page).toBe('README.md');
  });

  it('refuses a file a guide shows again under a path another page already gave', () => {
    const root = mkdtempSync(join(tmpdir(), 'mailroom-examples-'));
    try {
      mkdirSync(join(root, 'docs/api'), { recursive: true });
      writeFileSync(join(root, 'README.md'), markdown);
      writeFileSync(join(root, 'docs/api/README.md'), `${fence}ts\n// test/api.test.ts\n${fence}\n`); // generated: not read
      writeFileSync(join(root, 'docs/guide.md'), `text\n\n${fence}ts\n// test/signup.test.ts\ntest('y', () => {});\n${fence}\n`);
      expect(examplePages(root)).toEqual(['README.md', 'docs/guide.md']);
      expect(() => exampleFiles(root)).toThrow('docs/guide.md line 4: test/signup.test.ts is already README.md line 13; each file is shown by one page');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('movePorts', () => {
  const [config] = readmeFiles(markdown);

  it('moves whole port numbers only', () => {
    const file = { ...config!, text: "smtpPort: 2525, url: 'http://127.0.0.1:3000', timeout: 30000, sentence ends at 127.0.0.1:2525." };
    const moved = movePorts(
      file,
      new Map([
        [2525, 41000],
        [3000, 42000],
      ]),
    );
    expect(moved.text).toBe("smtpPort: 41000, url: 'http://127.0.0.1:42000', timeout: 30000, sentence ends at 127.0.0.1:41000.");
  });

  it('names a port the file no longer mentions', () => {
    expect(() => movePorts(config!, new Map([[8025, 41000]]))).toThrow('README.md: playwright.config.ts (line 3) no longer mentions port 8025');
  });
});
