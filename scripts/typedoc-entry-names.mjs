// A TypeDoc plugin for `npm run docs:api`: names each module of the API
// reference by the specifier a user imports (`mailroomjs/playwright`), not by
// the file TypeDoc read it from (`playwright/index.d.ts` would be "playwright",
// and the main entry "index").
import { Converter, ReflectionKind } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      module.name = module.name === 'index' ? 'mailroomjs' : `mailroomjs/${module.name}`;
    }
  });
}
