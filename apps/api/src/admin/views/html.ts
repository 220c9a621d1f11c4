/** Markup that is already safe: the result of `html`, or a trusted constant wrapped with `trusted`. */
export class Html {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export const escapeHtml = (text: string): string => text.replace(/[&<>"'`]/g, (c) => ENTITIES[c]!);

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * The only way pages are written: every interpolated value is escaped (text and quoted attributes alike),
 * unless it is itself `Html`. Arrays are joined; null, undefined and false render as nothing.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** A constant of this code base that is markup already (the stylesheet). Never pass data through it. */
export const trusted = (markup: string): Html => new Html(markup);
