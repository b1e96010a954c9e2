// `npm run bench`: runs every benchmark section, or the ones named on the
// command line (`npm run bench -- server`). Speed is proven here, not in
// timed unit tests. Each section prints its own table with its targets.
import { deliveryThreadBench } from './delivery-thread.js';
import { fixtureBench } from './fixture.js';
import { perTestBench } from './per-test.js';
import { providersBench } from './providers.js';
import { serverBench } from './server.js';
import { serverWaitBench } from './server-wait.js';
import { smtpRulesBench } from './smtp-rules.js';
import { storeBench } from './store.js';
import { storeBytesBench } from './store-bytes.js';
import { suiteBench } from './suite.js';
import type { BenchSection } from './section.js';
import { waitBench } from './wait.js';
import { webhooksBench } from './webhooks.js';

const sections: readonly BenchSection[] = [
  serverBench,
  smtpRulesBench,
  storeBench,
  storeBytesBench,
  webhooksBench,
  deliveryThreadBench,
  perTestBench,
  providersBench,
  waitBench,
  serverWaitBench,
  fixtureBench,
  suiteBench,
];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !sections.some((s) => s.name === name));
if (unknown.length > 0) {
  console.error(`Unknown bench section(s): ${unknown.join(', ')}. Sections: ${sections.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
for (const section of sections) {
  if (wanted.length > 0 && !wanted.includes(section.name) && !(section.partOf !== undefined && wanted.includes(section.partOf))) continue;
  console.log(`\n=== ${section.name}: ${section.description} ===`);
  await section.run();
}
