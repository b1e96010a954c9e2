// A customer writing to a support address: real SMTP (nodemailer) into the
// e2e mailroom server, as a mail provider would receive it.
import nodemailer from 'nodemailer';
import { SMTP_PORT } from '../servers.js';

export async function customerWrites(to: string, subject: string, text = 'Hello Acme, I need a hand.'): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: SMTP_PORT, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({ from: 'Dana Customer <dana@customer.example>', to, subject, text });
  } finally {
    transport.close();
  }
}
