#!/usr/bin/env node
// `npm run openapi:types` (also the last step of `npm run openapi:write`): the TypeScript types of the client
// library (libs/client/src/api-types.ts) from the committed OpenAPI document (libs/client/openapi.json):
// one type per schema of components.schemas, and the error codes of the document with their HTTP status.
// Small on purpose: it knows the OpenAPI 3.0 the API's document uses (objects, arrays, enums, nullable,
// anyOf/oneOf/allOf, $ref), and fails on anything else rather than guess.
// `--check` writes nothing: exit 1 when the committed types are not what the document gives.
// `--document FILE` and `--types FILE` name other files (the drift test uses them).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DOCUMENT = join('libs', 'client', 'openapi.json');
export const TYPES = join('libs', 'client', 'src', 'api-types.ts');

const REF = '#/components/schemas/';
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const comment = (text, indent) => {
  if (!text) return '';
  const lines = String(text).replaceAll('*/', '*\\/').split('\n');
  return lines.length === 1 ? `${indent}/** ${lines[0]} */\n` : `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ''}`).join('\n')}\n${indent} */\n`;
};

/** The TypeScript type of one schema object, `indent` being the indentation of the line it starts on. */
function typeOf(schema, indent, where) {
  if (schema === true || (schema && typeof schema === 'object' && Object.keys(schema).length === 0)) return 'unknown';
  const nullable = (t) => (schema.nullable ? `${t} | null` : t);
  if (schema.$ref) {
    if (!schema.$ref.startsWith(REF)) throw new Error(`${where}: a $ref outside components.schemas: ${schema.$ref}`);
    return nullable(schema.$ref.slice(REF.length));
  }
  for (const [key, op] of [['anyOf', ' | '], ['oneOf', ' | '], ['allOf', ' & ']]) {
    if (schema[key]) return nullable(schema[key].map((s, i) => `(${typeOf(s, indent, `${where}.${key}[${i}]`)})`).join(op));
  }
  if (schema.enum) return nullable(schema.enum.map((v) => JSON.stringify(v)).join(' | '));
  switch (schema.type) {
    case 'string':
      return nullable('string');
    case 'integer':
    case 'number':
      return nullable('number');
    case 'boolean':
      return nullable('boolean');
    case 'array':
      return nullable(`Array<${typeOf(schema.items ?? {}, indent, `${where}.items`)}>`);
    case 'object':
    case undefined: {
      if (schema.type === undefined && !schema.properties && schema.additionalProperties === undefined) {
        throw new Error(`${where}: a schema without a type this script knows: ${JSON.stringify(schema).slice(0, 200)}`);
      }
      return nullable(objectType(schema, indent, where));
    }
    default:
      throw new Error(`${where}: type ${schema.type} is not one this script knows`);
  }
}

function objectType(schema, indent, where) {
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  const lines = [];
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const key = IDENT.test(name) ? name : JSON.stringify(name);
    lines.push(`${comment(prop.description, inner)}${inner}${key}${required.has(name) ? '' : '?'}: ${typeOf(prop, inner, `${where}.${name}`)};`);
  }
  const extra = schema.additionalProperties;
  // OpenAPI's default (and `{}`) allows any other property; `false` allows none.
  if (extra !== false) lines.push(`${inner}[key: string]: ${extra && Object.keys(extra).length ? typeOf(extra, inner, `${where}.*`) : 'unknown'};`);
  return lines.length ? `{\n${lines.join('\n')}\n${indent}}` : 'Record<string, never>';
}

/**
 * Every error code of the document with its HTTP status: the error table of its introduction (every code
 * the API has, e.g. `not_found` for an unknown route, which no operation lists) and the examples of its
 * ErrorEnvelope answers. A code with two statuses is refused.
 */
function errorCodes(doc) {
  const codes = new Map();
  const add = (code, status, where) => {
    const seen = codes.get(code);
    if (seen !== undefined && seen !== status) throw new Error(`${where}: error ${code} is ${status} here, ${seen} elsewhere`);
    codes.set(code, status);
  };
  for (const m of String(doc.info?.description ?? '').matchAll(/^\| (\d{3}) \| `([a-z0-9_]+)` \|/gm)) add(m[2], Number(m[1]), 'the error table');
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const media = response.content?.['application/json'];
        if (media?.schema?.$ref !== `${REF}ErrorEnvelope`) continue;
        for (const example of Object.values(media.examples ?? {})) {
          const code = example.value?.errors?.[0]?.code;
          if (code) add(code, Number(status), `${method.toUpperCase()} ${path}`);
        }
      }
    }
  }
  return [...codes].sort(([a, x], [b, y]) => x - y || a.localeCompare(b));
}

/** The types file for a document, as text. */
export function generateTypes(doc) {
  const out = [
    '// Generated by scripts/openapi-types.mjs from libs/client/openapi.json (`npm run openapi:write`): do not edit.',
    `// ${doc.info?.title ?? 'API'} ${doc.info?.version ?? ''}, OpenAPI ${doc.openapi}.`,
    '',
  ];
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    if (!IDENT.test(name)) throw new Error(`schema name ${name} is not a TypeScript identifier`);
    const type = typeOf(schema, '', name);
    out.push(`${comment(schema.description, '')}export ${type.startsWith('{') && !schema.nullable ? `interface ${name} ${type}` : `type ${name} = ${type};`}`, '');
  }
  const codes = errorCodes(doc);
  if (!codes.length) throw new Error('the document has no error example: is it the API document?');
  out.push(
    '/** Every error code the API documents, with the HTTP status it comes with. */',
    'export const API_ERROR_STATUS = {',
    ...codes.map(([code, status]) => `  ${code}: ${status},`),
    '} as const;',
    '',
    'export type ApiErrorCode = keyof typeof API_ERROR_STATUS;',
    '',
  );
  return out.join('\n');
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const arg = (name, fallback) => {
    const at = process.argv.indexOf(name);
    return at > 0 && process.argv[at + 1] ? resolve(process.argv[at + 1]) : join(root, fallback);
  };
  const documentFile = arg('--document', DOCUMENT);
  const typesFile = arg('--types', TYPES);
  const doc = JSON.parse(readFileSync(documentFile, 'utf8'));
  const text = generateTypes(doc);
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(typesFile, 'utf8');
    } catch {
      /* missing: differs */
    }
    if (committed !== text) {
      process.stderr.write(`${relative(root, typesFile)} is not what ${relative(root, documentFile)} gives: run \`npm run openapi:types\` and commit it\n`);
      process.exit(1);
    }
    process.stdout.write(`${relative(root, typesFile)} matches ${relative(root, documentFile)}\n`);
  } else {
    writeFileSync(typesFile, text);
    process.stdout.write(`wrote ${relative(root, typesFile)}\n`);
  }
}
