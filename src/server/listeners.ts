// The two listeners' life: binding one with an error that names what could
// not listen where and why, closing one, and the URL a bound host is reached at.
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';

export function hostForURL(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export function listen(server: NetServer | HttpServer, port: number, host: string, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      const reason =
        error.code === 'EADDRINUSE'
          ? 'the port is already in use'
          : error.code === 'EACCES'
            ? 'permission denied'
            : error.code === 'EADDRNOTAVAIL'
              ? 'the address is not available on this machine'
              : error.message;
      reject(
        Object.assign(new Error(`mailroom: cannot listen for ${what} on ${host}:${port}: ${reason}${error.code ? ` (${error.code})` : ''}`), {
          code: error.code,
          cause: error,
        }),
      );
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

export function closeServer(server: NetServer | HttpServer): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });
}
