// A sender that hammers a deferring server, run as a child process by
// e2e/failure-output.spec.ts, which asserts on the failure text (the attempt
// timeline) and on the timeline attached to the report. The test sends the
// mail itself, retrying at once, as a careless app would.
import nodemailer from 'nodemailer';
import { test, expect } from 'mailroomjs/playwright';
import { SMTP_PORT } from '../servers.js';

test('hammers a deferring server', async ({ inbox }) => {
  console.log(`inbox: ${inbox.address}`);
  await inbox.smtp.defer({ times: 2 });
  for (let i = 0; i < 3; i++) {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: SMTP_PORT, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'careless@app.example', to: inbox.address, subject: 'Your code', text: '123456' }).catch(() => undefined);
    transport.close();
  }
  await expect(inbox).toHaveBackedOff();
});
