// Inline templates (SES's `TemplateContent` with `TemplateData`), rendered
// by Handlebars, the engine SES templates are written for: `{{name}}`,
// `{{#if}}`, `{{#each}}` behave as at SES. Loaded on the first template
// send, not with the server. Only templates given in the call are rendered;
// one stored at the provider is the dialect's `unsupported` failure.
import { fail } from '../../providers/api-send.js';

export interface TemplateParts {
  readonly subject: string | undefined;
  readonly html: string | undefined;
  readonly text: string | undefined;
}

let loading: Promise<typeof import('handlebars')> | undefined;

/** The parts rendered with `data` (a JSON object's text, as the call carries it); `field` names it in a refusal. */
export async function renderTemplate(parts: TemplateParts, data: string, field: string): Promise<TemplateParts> {
  let values: unknown;
  try {
    values = JSON.parse(data);
  } catch {
    return fail({ kind: 'invalid', field, detail: `${field} is not valid JSON` });
  }
  if (values === null || typeof values !== 'object' || Array.isArray(values)) fail({ kind: 'invalid', field, detail: `${field} must be a JSON object` });
  // A CommonJS module: under Node its exports are the default export, whatever its types say.
  const loaded = (await (loading ??= import('handlebars'))) as typeof import('handlebars') & { default?: typeof import('handlebars') };
  const handlebars = loaded.default ?? loaded;
  const render = (text: string | undefined, escape: boolean) => {
    if (text === undefined) return undefined;
    try {
      return handlebars.compile(text, { noEscape: !escape, strict: false })(values);
    } catch (error) {
      return fail({ kind: 'invalid', field, detail: `The template does not render: ${(error as Error).message}` });
    }
  };
  return { subject: render(parts.subject, false), html: render(parts.html, true), text: render(parts.text, false) };
}
