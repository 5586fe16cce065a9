import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Public APIs only: no source file reaches an underscore member of a Node or library object
 * (`res._header`, `socket._writableState`, `ws._sender`…, dotted or bracketed), and no transport
 * module keeps module-global mutable state between a serializer and a send (a `let`/`var` at the top
 * of src/server/, src/live/, src/lib/ws-sends.ts or src/plugins/graphql-sse*.ts: one socket's payload
 * could land in another's frame). The underscore names the schema itself defines for federation
 * (`Query._service`, `Query._entities`, the `_Any` scalar) are GraphQL names, not library members.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const GRAPHQL_UNDERSCORE_NAMES = new Set(['_service', '_entities', '_Any']);
const TRANSPORT_FILES = [
  /^server\//,
  /^live\//,
  /^lib\/ws-sends\.ts$/,
  /^plugins\/graphql-sse(-[a-z]+)?\.ts$/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Code without comments (a docstring may name `_header` to say it is not used). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Underscore member accesses in `text`: `x._name`, `x?._name`, `x['_name']`. */
function underscoreMembers(text: string): string[] {
  const code = withoutComments(text);
  const found = [
    ...code.matchAll(/\??\.(_[A-Za-z]\w*)/g),
    ...code.matchAll(/\[\s*['"`](_[A-Za-z]\w*)['"`]\s*\]/g),
  ].map((match) => match[1]!);
  return found.filter((name) => !GRAPHQL_UNDERSCORE_NAMES.has(name));
}

/** Top-level `let`/`var` declarations in `text` (module-global mutable state). */
function moduleGlobalState(text: string): string[] {
  return [...withoutComments(text).matchAll(/^(?:export\s+)?(?:let|var)\s+(\w+)/gm)].map(
    (match) => match[1]!,
  );
}

describe('public APIs only', () => {
  it('finds planted underscore members and module-global send state (the checks can fail)', () => {
    expect(underscoreMembers("res._header = 'x'; socket?._writableState; ws['_sender'];")).toEqual([
      '_header',
      '_writableState',
      '_sender',
    ]);
    expect(underscoreMembers('// res._header is not read\nconst a = data?._service?.sdl;')).toEqual([]);
    expect(
      moduleGlobalState('let pendingPayload: string | undefined;\nfunction f() { let local = 1; }'),
    ).toEqual(['pendingPayload']);
  });

  it('src/ reaches no underscore member of a Node or library object', () => {
    const offenders = sourceFiles(SRC).flatMap((file) =>
      underscoreMembers(readFileSync(file, 'utf8')).map((name) => `${relative(SRC, file)}: ${name}`),
    );
    expect(offenders).toEqual([]);
  });

  it('transport modules keep no module-global mutable state', () => {
    const transports = sourceFiles(SRC).filter((file) =>
      TRANSPORT_FILES.some((pattern) => pattern.test(relative(SRC, file).replaceAll('\\', '/'))),
    );
    expect(transports.length).toBeGreaterThan(5);
    const offenders = transports.flatMap((file) =>
      moduleGlobalState(readFileSync(file, 'utf8')).map((name) => `${relative(SRC, file)}: ${name}`),
    );
    expect(offenders).toEqual([]);
  });
});
