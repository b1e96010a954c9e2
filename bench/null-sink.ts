// The ceiling for the SMTP benchmark: an smtp-server configured like mailroom's
// intake that reads each message and throws it away. Whatever rate this gets
// is what the sending client and the machine allow.
import { SMTPServer } from 'smtp-server';

const port = Number(process.argv[2] ?? 0);
const server = new SMTPServer({
  authOptional: true,
  allowInsecureAuth: true,
  disabledCommands: ['STARTTLS'],
  disableReverseLookup: true,
  logger: false,
  size: 25 * 1024 * 1024,
  onConnect: (_session, callback) => callback(),
  onMailFrom: (_address, _session, callback) => callback(),
  onRcptTo: (_address, _session, callback) => callback(),
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.once('end', () => callback());
  },
});
server.listen(port, '127.0.0.1', () => {
  const address = server.server.address() as { port: number };
  console.log(`null sink listening on 127.0.0.1:${address.port}`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
