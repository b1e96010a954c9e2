// Reading a provider call's fields, for every dialect: each reader names the
// field in the provider's own spelling when it refuses (`to`, `Destination`,
// `personalizations[0].to`), so the error the SDK raises says which field of
// the app's call was wrong. Addresses are read by nodemailer's
// addressparser (`Ann <a@b.test>`, quoted names with commas), the parser the
// mail most apps send already went through.
import addressparser from 'nodemailer/lib/addressparser';
import { parseMailboxAddress } from '../../../contract/address.js';
import { fail, type ApiAddress } from '../../providers/api-send.js';
import type { FormBody } from './request-body.js';

const invalid = (field: string, detail: string): never => fail({ kind: 'invalid', field, detail });

/** A JSON object, or the refusal naming `field`. */
export function objectAt(value: unknown, field: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) invalid(field, `\`${field}\` must be an object`);
  return value as Record<string, unknown>;
}

/** A string field that may be absent (null counts as absent, as the SDKs send it). */
export function optionalString(o: Record<string, unknown>, key: string, field = key): string | undefined {
  const value = o[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') invalid(field, `\`${field}\` must be a string`);
  return value as string;
}

/** `Ann <a@b.test>` or `a@b.test` as an address, refused when it is not one. */
export function address(text: string, field: string): ApiAddress {
  const parsed = addressparser(text, { flatten: true });
  const first = parsed[0];
  if (parsed.length !== 1 || !first || parseMailboxAddress(first.address) === undefined) {
    invalid(field, `Invalid \`${field}\` address ${JSON.stringify(text)}: it must be \`email@example.com\` or \`Name <email@example.com>\``);
  }
  return first!.name ? { address: first!.address, name: first!.name } : { address: first!.address };
}

/** Every address of a comma-separated list (Postmark's `To`, Mailgun's `to`), each checked. */
export function addressList(text: string, field: string): ApiAddress[] {
  if (text.trim() === '') return [];
  return addressparser(text, { flatten: true }).map((entry) => {
    if (parseMailboxAddress(entry.address) === undefined) {
      invalid(field, `Invalid \`${field}\` address ${JSON.stringify(entry.name ? `${entry.name} <${entry.address}>` : entry.address)}`);
    }
    return entry.name ? { address: entry.address, name: entry.name } : { address: entry.address };
  });
}

/** A field that is one address string or an array of them (Resend's `to`, SES's lists). */
export function addressesAt(value: unknown, field: string): ApiAddress[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return addressList(value, field);
  if (!Array.isArray(value)) return invalid(field, `\`${field}\` must be a string or an array of strings`);
  return value.flatMap((entry, i) => {
    if (typeof entry !== 'string') invalid(`${field}[${i}]`, `\`${field}[${i}]\` must be a string`);
    return addressList(entry as string, field);
  });
}

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

/** A base64 field's bytes, refused when it is not base64 (Buffer.from would read anything). */
export function base64At(value: unknown, field: string): Buffer {
  if (typeof value !== 'string') return invalid(field, `\`${field}\` must be a base64 string`);
  const compact = value.replace(/\s+/g, '');
  if (!BASE64.test(value) || compact.replace(/=+$/, '').length % 4 === 1) invalid(field, `\`${field}\` is not valid base64`);
  return Buffer.from(compact, 'base64');
}

/** Header name/value pairs from an object (`{"X-A": "1"}`), each a string. */
export function headerPairs(value: unknown, field: string): [string, string][] {
  if (value === undefined || value === null) return [];
  const o = objectAt(value, field);
  return Object.entries(o).map(([name, v]) => {
    if (typeof v !== 'string' && typeof v !== 'number') invalid(`${field}.${name}`, `\`${field}.${name}\` must be a string`);
    if (!/^[!-9;-~]+$/.test(name)) invalid(field, `${JSON.stringify(name)} is not a header name`);
    return [name, String(v)];
  });
}

/** Every value a form field was sent with, in the order sent (Mailgun's repeated `to`, `o:tag`). */
export function formValues(form: FormBody, name: string): string[] {
  return form.fields.flatMap(([key, value]) => (key === name ? [value] : []));
}

/** A form field that may be sent once: undefined when absent, refused naming it when sent twice. */
export function formValue(form: FormBody, name: string): string | undefined {
  const values = formValues(form, name);
  if (values.length > 1) invalid(name, `\`${name}\` was sent ${values.length} times; send it once`);
  return values[0];
}
