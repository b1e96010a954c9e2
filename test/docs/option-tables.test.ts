// The `mailroom` option's tables in the two getting-started guides list the
// keys the option takes: the validator's own list, read from the message a
// misspelt key gets (src/runner/test-options.ts). Two keys once lived only in
// docs/backends.md; the Vitest guide quotes that message, so it is checked too.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateTestOptions } from '../../src/runner/test-options.js';

const page = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');

/** The keys the validator takes, as its message for an unknown key lists them. */
function optionKeys(): { readonly message: string; readonly keys: string[] } {
  try {
    validateTestOptions({ timout: 1 });
  } catch (error) {
    const message = (error as Error).message;
    return { message, keys: message.slice(message.indexOf('expected one of ') + 'expected one of '.length).split(', ') };
  }
  throw new Error('validateTestOptions took a misspelt key');
}

/** The keys in the first column of a table row: `| \`apiURL\` | …`. */
const tableKeys = (markdown: string) => [...markdown.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]!);

describe('the option tables of the getting-started guides', () => {
  const { message, keys } = optionKeys();

  it.each(['getting-started-playwright.md', 'getting-started-vitest.md'])('%s has a row for every key the option takes', (name) => {
    expect(keys.length).toBeGreaterThan(5);
    expect(keys.filter((key) => !tableKeys(page(name)).includes(key))).toEqual([]);
  });

  it('the Vitest guide quotes the misspelt-key message as it reads', () => {
    expect(page('getting-started-vitest.md').replace(/\s+/g, ' ')).toContain(`\`\`TypeError: ${message}\`\``);
  });
});
