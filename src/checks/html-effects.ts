// What a client that lacks a feature does to the mail, and so how much it
// matters: the rule of the html check (docs/mail-checks.md, "Severity from
// effect"). caniemail says whether a client supports a feature; a client
// that lacks one drops it, and what that does depends on the feature:
//
// | role      | when a client lacks it                                   | problem                  |
// | --------- | -------------------------------------------------------- | ------------------------ |
// | breaks    | the layout falls apart or content is lost or never shown | error (in part: warning) |
// | degrades  | the mail still reads, but looks or behaves otherwise     | warning                  |
// | enhances  | ignoring it is the fallback the mail was written for     | none (only in the score) |
//
// Features not in the table degrade. A declaration that only resets (`0`,
// `none`, `normal`, `auto`) degrades nothing when dropped: the element is as
// it is by default. Whatever a client never reads is not judged for it: a
// hidden preheader's styles, the part of the mail in `<!--[if !mso]>` for
// Outlook for Windows, a <style> block's rules for a client without <style>.
import { isReset } from './css-declarations.js';
import type { Use } from './html-uses.js';

export type Role = 'breaks' | 'degrades' | 'enhances';

interface Effect {
  readonly role: Role | ((use: Use) => Role);
  /** What a client that lacks it does instead, for the problem's message. */
  readonly instead: string;
}

const layout = (instead: string): Effect => ({ role: 'breaks', instead });
const lost = (instead: string): Effect => ({ role: 'breaks', instead });
const enhances = (instead: string): Effect => ({ role: 'enhances', instead });
const degrades = (instead: string): Effect => ({ role: 'degrades', instead });

/** Whether a value, a selector or the mail's own structure makes a layout feature carry the layout. */
const value = (use: Use, test: RegExp) => use.declarations.some((d) => test.test(d.value.toLowerCase()));
const tableAround = (use: Use) =>
  use.element ? use.element.inTable : use.reading.elements.size > 0 && [...use.reading.elements.values()].some((e) => e.name === 'table');
const inlineStyled = (use: Use) => use.reading.inlineStyled;

/** By caniemail slug (and mailroom's own, for what caniemail has no entry for: html-content.ts). */
const EFFECTS: Readonly<Record<string, Effect>> = {
  // Layout that falls apart.
  'css-display-flex': layout('lays the items out as plain blocks, one under the other, and the layout falls apart'),
  'css-display-grid': layout('lays the items out as plain blocks, one under the other, and the layout falls apart'),
  'css-grid-template': layout('ignores the grid tracks, and the layout falls apart'),
  'css-flex-direction': layout('lays the items out in a row instead of a column'),
  'css-flex-wrap': layout('keeps the items on one line, too wide for the screen'),
  'css-position': {
    role: (use) => (value(use, /\b(absolute|fixed)\b/) ? 'breaks' : 'enhances'),
    instead: 'leaves the element in the flow, where it overlaps or pushes what was laid out around it',
  },
  'css-left-right-top-bottom': { role: 'enhances', instead: 'ignores the offset (it only moves a positioned element)' },
  'css-inset': { role: 'enhances', instead: 'ignores the offset (it only moves a positioned element)' },
  'css-float': {
    role: (use) => (!value(use, /\b(left|right)\b/) ? 'enhances' : !tableAround(use) ? 'breaks' : use.reading.msoTables ? 'enhances' : 'degrades'),
    instead: 'stacks the floated element instead of setting it beside the others',
  },
  'css-clear': enhances('ignores it (nothing floats there to clear)'),
  // Content that is lost or never shown.
  'html-form': lost('drops the form, or shows it and never sends it'),
  'html-input-text': lost('drops the field'),
  'html-input-checkbox': lost('drops the checkbox'),
  'html-input-radio': lost('drops the radio button'),
  'html-input-hidden': lost('drops the field'),
  'html-input-submit': lost('drops the button, and the form cannot be sent'),
  'html-input-reset': lost('drops the button'),
  'html-button-submit': lost('drops the button, and the form cannot be sent'),
  'html-button-reset': lost('drops the button'),
  'html-select': lost('drops the list'),
  'html-textarea': lost('drops the field'),
  'html-video': lost('drops the video or never plays it (only the fallback inside <video> shows)'),
  'html-audio': lost('drops the audio or never plays it'),
  'html-object': lost('drops the embedded object'),
  'html-svg': lost('never shows the inline SVG (a logo or icon in it is lost)'),
  'html-script': lost('never runs the script: what it would show or do never happens'),
  'html-iframe': lost('removes the frame and whatever it shows'),
  'html-embed': lost('removes the embedded content'),
  'html-canvas': lost('shows an empty box: a canvas is drawn by script'),
  'html-meter': degrades('shows the fallback text inside <meter>, without the bar'),
  'html-progress': degrades('shows the fallback text inside <progress>, without the bar'),
  'image-webp': lost('never shows the image'),
  'image-avif': lost('never shows the image'),
  'image-heif': lost('never shows the image'),
  'image-tiff': lost('never shows the image'),
  'image-svg': lost('never shows the image'),
  'image-ico': lost('never shows the image'),
  'image-hdr': lost('never shows the image'),
  'image-mp4': lost('never plays the video image'),
  'image-base64': lost('never shows an image embedded as a data: URL'),
  'css-background-image': { role: (use) => (use.element?.hasText ? 'breaks' : 'degrades'), instead: 'drops the background image' },
  'css-background': { role: (use) => (use.element?.hasText ? 'breaks' : 'degrades'), instead: 'drops the background image' },
  'html-background': { role: (use) => (use.element?.hasText ? 'breaks' : 'degrades'), instead: 'drops the background image' },
  'css-at-font-face': enhances('never loads the web font, and shows the next font the mail names'),
  // Enhancements: what a client does without them is what the mail was written to look like there.
  'css-at-media': enhances('ignores the media query and shows the layout written inline (MJML, Foundation and Cerberus write the narrow layout that way)'),
  'css-at-media-hover': enhances('ignores the media query'),
  'css-at-media-orientation': enhances('ignores the media query'),
  'css-at-media-prefers-color-scheme': enhances('shows the light design, or darkens it itself'),
  'css-at-media-prefers-reduced-motion': enhances('ignores the media query'),
  'css-at-media-device-pixel-ratio': enhances('ignores the media query'),
  'css-at-supports': enhances('ignores the rules inside'),
  'css-at-import': enhances('does not load the imported CSS (a web font: the font family falls back)'),
  'html-link': enhances('does not load the linked CSS (a web font: the font family falls back)'),
  'css-pseudo-class-hover': enhances('shows no hover effect'),
  'css-pseudo-class-focus': enhances('shows no focus effect'),
  'css-pseudo-class-focus-visible': enhances('shows no focus effect'),
  'css-pseudo-class-focus-within': enhances('shows no focus effect'),
  'css-pseudo-class-active': enhances('shows no effect while pressed'),
  'css-pseudo-class-visited': enhances('shows visited links as other links'),
  'css-pseudo-class-link': enhances('keeps its own link colour'),
  'css-selector-class': { role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'), instead: 'ignores the rule: the mail shows its inline styles only' },
  'css-selector-id': { role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'), instead: 'ignores the rule: the mail shows its inline styles only' },
  'css-selector-type': { role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'), instead: 'ignores the rule: the mail shows its inline styles only' },
  'css-selector-descendant': {
    role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'),
    instead: 'ignores the rule: the mail shows its inline styles only',
  },
  'css-selector-child': { role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'), instead: 'ignores the rule: the mail shows its inline styles only' },
  'css-selector-chaining': { role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'), instead: 'applies the rule to the first class of the chain only' },
  'css-selector-grouping': { role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'), instead: 'ignores the rule: the mail shows its inline styles only' },
  'css-selector-universal': {
    role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'),
    instead: 'ignores the rule: the mail shows its inline styles only',
  },
  'css-selector-attribute': {
    role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'),
    instead: 'ignores the rule: the mail shows its inline styles only',
  },
  'css-selector-adjacent-sibling': {
    role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'),
    instead: 'ignores the rule: the mail shows its inline styles only',
  },
  'css-selector-general-sibling': {
    role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'),
    instead: 'ignores the rule: the mail shows its inline styles only',
  },
  'html-style': { role: (use) => (inlineStyled(use) ? 'enhances' : 'degrades'), instead: 'drops the <style> block: the mail shows its inline styles only' },
  'css-comments': enhances('drops the comment'),
  'html-comments': enhances('drops the comment'),
  'html-doctype': enhances('renders the mail in its own mode, as it does every mail'),
  'html-body': {
    role: (use) => (use.reading.bodyBackgroundAlone ? 'degrades' : 'enhances'),
    instead: 'replaces <body> by a <div> or drops it, and its attributes with it',
  },
  'html-role': enhances('drops the role; screen readers in that client read a layout table as a table'),
  'html-aria-label': enhances('drops the label; a screen reader reads the element as it is'),
  'html-aria-hidden': enhances('drops the attribute; a screen reader reads the element'),
  'html-aria-describedby': enhances('drops the attribute'),
  'html-aria-labelledby': enhances('drops the attribute'),
  'html-aria-live': enhances('drops the attribute'),
  'html-lang': enhances('drops the language; a screen reader reads in its own'),
  'html-dir': enhances('drops the direction; text runs as the client sets it'),
  'css-direction': enhances('drops the direction; text runs as the client sets it'),
  'html-target': enhances('opens the link in a new window anyway'),
  'html-loading-attribute': enhances('loads the image at once'),
  'html-srcset': enhances('shows the image in its src'),
  'html-picture': enhances('shows the <img> inside <picture>'),
  'html-marquee': enhances('shows the text without moving it'),
  'html-meta-color-scheme': enhances('shows the light design, or darkens it itself'),
  'css-color-scheme': enhances('shows the light design, or darkens it itself'),
  'css-function-light-dark': enhances('drops the declaration, and the element keeps the colour it inherits'),
  'css-cursor': enhances('shows its own pointer'),
  'css-transition': enhances('changes at once, without the transition'),
  'css-animation': enhances('shows the element still'),
  'css-at-keyframes': enhances('shows the element still'),
  'css-user-select': enhances('lets the text be selected as usual'),
  'css-pseudo-class-target': enhances('ignores the rule'),
  'css-z-index': enhances('stacks the elements in their order (z-index only orders positioned elements)'),
  'css-important': enhances('applies the declaration as an ordinary one'),
  'css-text-decoration-skip-ink': enhances('draws the underline through the letters'),
  'css-font-kerning': enhances('spaces the letters as the font does'),
  'css-hyphens': enhances('breaks no word with a hyphen'),
  'css-word-break': enhances('breaks long words only where they have a space or a hyphen'),
  'css-word-wrap': enhances('breaks long words only where they have a space or a hyphen'),
  'css-overflow-wrap': enhances('breaks long words only where they have a space or a hyphen'),
  'css-text-overflow': enhances('cuts the text without an ellipsis'),
  'css-mso': enhances('ignores it'),
  'html-anchor-links': degrades('does nothing when the link is pressed'),
  // Display values but flex, grid and none: a client without them lays the element out as its tag does, which a table layout already does.
  'css-display': {
    role: (use) => (use.reading.msoTables || use.element?.inTable || !use.element ? 'enhances' : 'degrades'),
    instead: 'lays the element out as its tag does',
  },
  'css-border-radius': degrades('draws square corners'),
  'css-box-shadow': degrades('draws no shadow'),
  'css-text-shadow': degrades('draws no shadow'),
  'css-max-width': degrades('lets the element take the full width'),
  'css-min-width': { role: (use) => (use.reading.msoTables || value(use, /%/) ? 'enhances' : 'degrades'), instead: 'lets the element shrink below that width' },
  'css-box-sizing': enhances('sizes the element by its content box (with padding, a little larger)'),
  'css-table-layout': enhances('sizes the columns by their content'),
  'css-sytem-ui': enhances('skips the system font and shows the next font in the list'),
  'css-text-decoration': {
    role: (use) => (use.element?.name === 'a' && value(use, /^underline/) ? 'enhances' : 'degrades'),
    instead: 'drops the decoration',
  },
  'css-background-size': degrades('shows the background image at its own size'),
  'css-background-position': degrades('shows the background image from its top left corner'),
  'css-background-repeat': degrades('repeats the background image'),
  'css-linear-gradient': degrades('drops the gradient (a background colour set before it shows)'),
  'css-radial-gradient': degrades('drops the gradient (a background colour set before it shows)'),
  'css-opacity': degrades('shows the element opaque'),
  'css-padding': degrades('drops the padding (Outlook pads table cells only)'),
  'css-margin': degrades('drops the margin'),
  'css-height': degrades('lets the element take the height of its content'),
  'css-width': degrades('lets the element take the width of its content'),
  'css-unit-rem': degrades('drops the declaration (sizes in rem)'),
};

const DEFAULT_EFFECT: Effect = degrades('drops it, and the mail looks otherwise there');

/** The role of a feature as the mail uses it: a declaration that only resets never breaks or degrades anything when dropped. */
export function roleOf(slug: string, use: Use): Role {
  // A declaration for a hover or focus state is as much an enhancement as the state itself.
  if (use.declarations.length > 0 && /:(hover|focus|focus-within|focus-visible|active|visited)\b/.test(use.selector ?? '')) return 'enhances';
  const effect = EFFECTS[slug] ?? DEFAULT_EFFECT;
  const role = typeof effect.role === 'function' ? effect.role(use) : effect.role;
  if (role !== 'enhances' && use.declarations.length > 0 && use.declarations.every((d) => isReset(d.value))) return 'enhances';
  return role;
}

export function insteadOf(slug: string): string {
  return (EFFECTS[slug] ?? DEFAULT_EFFECT).instead;
}

/** Every slug the table names, for the `accept` option's check and the docs. */
export const JUDGED_SLUGS: readonly string[] = Object.keys(EFFECTS);
