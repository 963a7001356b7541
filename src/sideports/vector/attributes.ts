// Element attributes byte for byte, as Redis keeps them: the attribute string is stored as given (any
// text, JSON or not) and returned unchanged. The service stores metadata objects, so the side port
// sends the attribute string's JSON object fields (when it is one, so the service's own filters see
// them) plus the string itself under RAW_KEY, and answers with that string.

import { PROJ_KEY } from './projection.js';
import type { Quant } from './quantization.js';

/** The metadata field that holds the attribute string as the client sent it. */
export const RAW_KEY = '__vset_attributes';
/** The metadata field that holds the quantization the element was added with (Redis' per-set choice). */
export const QUANT_KEY = '__vset_quant';
/** The metadata field that holds the set's M when it is not Redis' default 16 (absent: 16). */
export const M_KEY = '__vset_m';
export const DEFAULT_M = 16;

/** The set's M recorded in a record's metadata. */
export function linksOf(m: Metadata | undefined): number {
  const v = m?.[M_KEY];
  return typeof v === 'number' && Number.isInteger(v) ? v : DEFAULT_M;
}

type Metadata = Record<string, unknown>;

/** The quantization recorded in a record's metadata (f32 for a record another client wrote). */
export function quantOf(m: Metadata | undefined): Quant {
  const q = m?.[QUANT_KEY];
  return q === 'int8' || q === 'bin' ? q : 'f32';
}

/** The set-wide fields of a record's metadata (quantization, projection), kept when attributes change. */
export function setFields(m: Metadata | undefined): Metadata {
  const out: Metadata = {};
  for (const k of [QUANT_KEY, PROJ_KEY, M_KEY]) if (m?.[k] !== undefined) out[k] = m[k];
  return out;
}

/** Metadata with the element's quantization recorded. */
export function withQuant(m: Metadata | undefined, quant: Quant): Metadata {
  return { ...(m ?? {}), [QUANT_KEY]: quant };
}

/** The metadata to store for an attribute string. */
export function attributesMetadata(raw: string): Metadata {
  let fields: Metadata = {};
  if (raw.trimStart().startsWith('{')) {
    try {
      const v: unknown = JSON.parse(raw);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) fields = v as Metadata;
    } catch {
      // Not JSON: kept as text only (FILTER then finds no field in it, as in Redis).
    }
  }
  return { ...fields, [RAW_KEY]: raw };
}

/**
 * The attribute string of a record's metadata: the stored string, or (a record written by another
 * client of the service) its metadata as JSON; null when it has none.
 */
export function attributesText(m: Metadata | undefined): string | null {
  if (!m) return null;
  const raw = m[RAW_KEY];
  if (typeof raw === 'string') return raw;
  const { [QUANT_KEY]: _quant, [PROJ_KEY]: _proj, [M_KEY]: _m, ...fields } = m;
  if (Object.keys(fields).length === 0) return null;
  return JSON.stringify(fields);
}
