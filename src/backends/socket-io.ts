// Just enough of socket.io 4 (Engine.IO protocol v4) over a plain WebSocket
// to hear one event: maildev's `newMail`. The frames, as socket.io's own
// parser writes them (engine.io-parser, socket.io-parser):
//   `0{...}`  Engine.IO open          -> answer `40` (connect to namespace /)
//   `40{...}` socket.io connected     -> the stream is ready
//   `2`       ping                    -> answer `3` (pong), or the server drops us
//   `42["event", data]`               an event
//   `41`, `44{...}`, `1`              disconnect, refused connect, close
import type { FeedProtocol } from './push-feed.js';

export function socketIoProtocol(mailEvent: string): FeedProtocol {
  return {
    readyOnOpen: false,
    onFrame(frame, send) {
      if (frame.startsWith('0')) {
        send('40');
        return undefined;
      }
      if (frame === '2') {
        send('3');
        return undefined;
      }
      if (frame.startsWith('40')) return 'ready';
      if (frame === '41' || frame === '1' || frame.startsWith('44')) return 'closed';
      if (frame.startsWith('42')) {
        try {
          const [name] = JSON.parse(frame.slice(2)) as [unknown];
          return name === mailEvent ? 'mail' : undefined;
        } catch {
          return undefined;
        }
      }
      return undefined;
    },
  };
}
