// Prompts for the flows agents run most: verify a signup, follow a password
// reset, check that no mail was sent. Each spells out the tool calls, with
// the server-side wait in place of polling, and the watermark taken before
// the action so mail that was already there never passes for the new one.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

function userPrompt(description: string, steps: readonly string[]): GetPromptResult {
  const text = steps.map((step, i) => `${i + 1}. ${step}`).join('\n');
  return { description, messages: [{ role: 'user', content: { type: 'text', text } }] };
}

const KEEP_WAITING =
  'If it answers timed_out, that is not a failure yet: call wait_for_message again with the same arguments, up to three times in all, then report that no mail came.';

export function registerFlowPrompts(server: McpServer): void {
  server.registerPrompt(
    'verify_signup',
    {
      title: 'Verify a signup by email',
      description: 'Sign up in the app with a fresh address, wait for the confirmation mail, and confirm with its link or code.',
      argsSchema: {
        signup_url: z.string().describe('Where the signup form is, e.g. http://localhost:3000/signup.'),
        label: z.string().optional().describe('A readable start for the address; default "signup".'),
      },
    },
    (args) =>
      userPrompt('Verify a signup by email', [
        `Call fresh_address with label ${JSON.stringify(args.label ?? 'signup')}. Keep its address and since_id.`,
        `Open ${args.signup_url} in the browser and sign up with that address (make up the other fields).`,
        `Call wait_for_message with that address (and since_id when fresh_address gave one). It waits on the server; do not poll with list_messages. ${KEEP_WAITING}`,
        "Read the answer's block at the end: use the one-time code it names, or open the link whose words say to confirm or verify (not unsubscribe, not a footer link). Do not read codes out of the HTML yourself.",
        'Finish in the browser and check that the app shows the account as confirmed. Report the address, the subject of the mail, and what you clicked or typed.',
      ]),
  );

  server.registerPrompt(
    'follow_password_reset',
    {
      title: 'Follow a password reset',
      description: "Ask the app for a password reset for an account's address, wait for the reset mail, and set a new password through it.",
      argsSchema: {
        address: z.string().describe("The account's email address, at a domain this server receives mail for."),
        reset_url: z.string().describe('Where the "forgot password" form is.'),
      },
    },
    (args) =>
      userPrompt('Follow a password reset', [
        `Call list_messages with address ${args.address} and limit 1, and note the id of the newest message (none if the mailbox is empty): that is since_id, so the reset mail cannot be confused with an older one.`,
        `Open ${args.reset_url} in the browser and ask for a reset for ${args.address}.`,
        `Call wait_for_message with address ${args.address} and that since_id. ${KEEP_WAITING}`,
        "Open the answer's reset link (the one whose words say reset or choose a new password), or type its code, and set a new password.",
        'Log in with the new password to check it took. Report the subject of the mail and whether the login worked.',
      ]),
  );

  server.registerPrompt(
    'check_no_mail_sent',
    {
      title: 'Check that no mail was sent',
      description: 'Do something in the app that must not send mail, and check that none arrives within a while.',
      argsSchema: {
        address: z.string().describe('The address that must not get mail.'),
        action: z.string().describe('What to do in the app, e.g. "sign up again with the same address".'),
        seconds: z.string().optional().describe('How long to wait for mail that should not come, in seconds; default 10.'),
      },
    },
    (args) =>
      userPrompt('Check that no mail was sent', [
        `Call list_messages with address ${args.address} and limit 1, and note the id of the newest message (none if the mailbox is empty): that is since_id.`,
        `In the browser: ${args.action}.`,
        `Call wait_for_message with address ${args.address}, that since_id and timeout_seconds ${args.seconds ?? '10'}. An answer with timed_out true is the pass: no mail came.`,
        'If a message comes back instead, that is the failure: report its subject, sender and when it arrived.',
      ]),
  );
}
