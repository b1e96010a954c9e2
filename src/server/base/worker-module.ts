// Starting a worker thread whose entry is a module beside the caller (the
// webhooks' delivery thread, the mail checks' threads). The built package
// loads the compiled .js directly. From TypeScript source (mailroom's own
// tests, under tsx or Vitest) the entry is a .ts file node cannot load by
// itself: it is loaded through tsx, a dev dependency, registered inside the
// thread; the built package never touches tsx.
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** A thread running `./<name>.js` (or `.ts`, from source) next to the module at `callerUrl` (its `import.meta.url`). */
export function startWorkerModule(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  const fromSource = callerUrl.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, callerUrl);
  if (fromSource) {
    const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
    return new Worker(code, { ...options, eval: true });
  }
  return new Worker(entry, options);
}
