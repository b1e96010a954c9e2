#!/usr/bin/env node
// `mailroom serve`: the embedded mail server from the command line.
import { main } from './main.js';

main(process.argv.slice(2), process.env).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  },
);
