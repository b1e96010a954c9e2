#!/usr/bin/env node
// `mailroom serve`: the embedded mail server from the command line.
process.exitCode = 0;
