import { z } from 'zod';

// Each helper takes the default as the *text* one would write in the environment, so a default goes
// through the same validation as a value that was set (zod's `prefault`).

/** Integer setting with bounds. */
export const intSetting = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .prefault(String(def));

/** Boolean setting: true/false, 1/0, yes/no, on/off (case-insensitive). */
export const boolSetting = (def: boolean) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => ['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'].includes(v), 'must be true or false')
    .transform((v) => ['true', '1', 'yes', 'on'].includes(v))
    .prefault(String(def));

/** A URL whose scheme is one of `protocols` (e.g. 'https:'). */
const urlWith = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine((v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, `must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`);

export const urlSetting = (def: string, protocols: string[]) => urlWith(protocols).prefault(def);

/** A secret with no default: its absence is refused with `missing` (REQUIRED_OUTSIDE_LOCAL). */
export const requiredText = (missing: string, max = 1000) => z.string().trim().min(1, missing).max(max, `must be at most ${max} characters`).prefault('');

const HEX_KEY = 'must be a hexadecimal string of an even length, at least 32 characters (16 bytes)';
const isHexKey = (v: string) => v.length >= 32 && v.length % 2 === 0 && /^[0-9a-fA-F]+$/.test(v);

/** A hexadecimal secret with no default (the partner's shared key): its absence is refused with `missing`. */
export const requiredHexKey = (missing: string) =>
  z.string().trim().refine((v) => v.length > 0, { message: missing, abort: true }).refine(isHexKey, HEX_KEY).prefault('');

/** A hexadecimal secret (the simulator's shared key): even length, at least 16 bytes. */
export const hexKeySetting = (def: string) =>
  z
    .string()
    .trim()
    .refine(
      (v) => v.length >= 32 && v.length % 2 === 0 && /^[0-9a-fA-F]+$/.test(v),
      'must be a hexadecimal string of an even length, at least 32 characters (16 bytes)',
    )
    .prefault(def);

/** A non-negative decimal amount in currency units, at most 2 decimals (balances). */
export const amountSetting = (def: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+(\.\d{1,2})?$/, 'must be a non-negative amount with at most 2 decimals')
    .transform(Number)
    .prefault(def);

export const textSetting = (def: string, max = 1000) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`).prefault(def);

export const enumSetting = <T extends string>(values: readonly [T, ...T[]], def: T) =>
  z
    .string()
    .trim()
    .refine((v) => (values as readonly string[]).includes(v), `must be one of ${values.join(', ')}`)
    .transform((v) => v as T)
    .prefault(def);

/** A URL setting without default (undefined when unset). */
export const optionalUrlSetting = (protocols: string[]) => urlWith(protocols).optional();

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON setting of the shape `valid` accepts (checked in depth by its reader); unset or empty: `empty`. */
export const jsonSetting = <T>(empty: T, valid: (value: unknown) => boolean, message: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx): T => {
      if (v === undefined || v.trim() === '') return empty;
      try {
        const parsed: unknown = JSON.parse(v);
        if (valid(parsed)) return parsed as T;
      } catch {
        // reported below
      }
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    });
