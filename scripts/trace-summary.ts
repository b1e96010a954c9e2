// Prints a failed Playwright test's trace as text, for CI's evidence: the
// trace.zip itself is lost with the clone, and a wait that ran out ("element
// not found") says nothing of why. One timeline, in ms from the test's first
// step: each action and assertion, each request the page made (status and
// duration) and each console message.
//
// Usage: unzip -p trace.zip '*.trace' '*.network' | npx tsx scripts/trace-summary.ts
import { text } from 'node:stream/consumers';
import { stripVTControlCharacters } from 'node:util';

/** The fields of Playwright's trace events (trace.trace and trace.network, one JSON object a line) this reads. */
interface TraceEvent {
  type?: string;
  class?: string;
  method?: string;
  title?: string;
  params?: { selector?: string };
  startTime?: number;
  endTime?: number;
  time?: number;
  error?: { message?: string; error?: { message?: string } };
  messageType?: string;
  text?: string;
  snapshot?: { _monotonicTime: number; time: number; request: { method: string; url: string }; response?: { status: number } };
}

function shortURL(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.host}${url.pathname}${url.search}`.slice(0, 160);
  } catch {
    return raw.slice(0, 160);
  }
}

function describe(event: TraceEvent): { at: number; text: string } | undefined {
  if (event.type === 'before' && event.class !== 'Tracing') {
    const selector = event.params?.selector ? ` ${event.params.selector}` : '';
    return { at: event.startTime ?? 0, text: `${event.title ?? `${event.class}.${event.method}`}${selector}` };
  }
  if (event.type === 'after' && event.error) {
    const message = event.error.message ?? event.error.error?.message ?? '';
    return { at: event.endTime ?? 0, text: `  failed: ${stripVTControlCharacters(message).split('\n')[0]}` };
  }
  if (event.type === 'console') return { at: event.time ?? 0, text: `console.${event.messageType}: ${event.text}` };
  if (event.type === 'resource-snapshot' && event.snapshot) {
    const { request, response, time, _monotonicTime } = event.snapshot;
    const status = response && response.status > 0 ? response.status : 'no answer';
    return { at: _monotonicTime, text: `${request.method} ${shortURL(request.url)} -> ${status} in ${Math.round(time)} ms` };
  }
  return undefined;
}

const timeline: { at: number; text: string }[] = [];
for (const line of (await text(process.stdin)).split('\n')) {
  let event: TraceEvent;
  try {
    event = JSON.parse(line) as TraceEvent;
  } catch {
    continue; // a blank or cut line
  }
  const entry = describe(event);
  if (entry) timeline.push(entry);
}
timeline.sort((a, b) => a.at - b.at);
const start = timeline[0]?.at ?? 0;
for (const entry of timeline) console.log(`${String(Math.round(entry.at - start)).padStart(7)} ms  ${entry.text}`);
if (timeline.length === 0) console.log('(the trace held no steps)');
