// A point in time as the UI shows it: short in the lists (the time today, the
// date too before that), in full with the date and the zone where there is
// room (the message head), and in full when pointed at, everywhere.
import { formatFullTime, formatTime } from './format.js';

export function When({ iso, full = false }: { iso: string; full?: boolean }) {
  const whole = formatFullTime(iso);
  return (
    <time dateTime={iso} title={whole}>
      {full ? whole : formatTime(iso)}
    </time>
  );
}
