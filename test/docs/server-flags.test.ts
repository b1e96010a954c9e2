// docs/server.md's flag table is the page that claims to cover `mailroom
// serve` and its options; `mailroom --help` (src/cli/help.ts) is what the
// command itself lists. A flag added to one and not the other is caught here,
// naming it (four flags once lived only in security.md and CONTRACT.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HELP } from '../../src/cli/help.js';

const SERVER_MD = readFileSync(new URL('../../docs/server.md', import.meta.url), 'utf8');

/** The flags of --help's Options section: each line that starts with one, `-h, --help` included. */
function helpFlags(help: string): string[] {
  return [...help.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]!);
}

/** The flags in the first column of server.md's table (`| \`--smtp-port <port>\` |`, `| \`-h\`, \`--help\` |`). */
function tableFlags(markdown: string): string[] {
  return [...markdown.matchAll(/^\| (?:`-\w`, )?`(--[a-z][a-z-]*)/gm)].map((m) => m[1]!);
}

describe("docs/server.md's flag table", () => {
  it('has a row for every flag `mailroom --help` lists, and no flag the command does not take', () => {
    const help = helpFlags(HELP);
    const table = tableFlags(SERVER_MD);
    expect(help.length).toBeGreaterThan(30);
    expect(help.filter((flag) => !table.includes(flag))).toEqual([]);
    expect(table.filter((flag) => !help.includes(flag))).toEqual([]);
  });
});
