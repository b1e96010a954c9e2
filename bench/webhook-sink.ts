// A webhook receiver for `npm run bench -- webhooks`, in its own process so
// it takes no time from the bench's SMTP sender: answers every POST 204 and
// counts them; GET /count says how many it has had.
import { createServer } from 'node:http';

let count = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(String(count));
  req.resume();
  req.on('end', () => {
    count++;
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2]), '127.0.0.1', () => console.log(`webhook sink listening on ${process.argv[2]}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
