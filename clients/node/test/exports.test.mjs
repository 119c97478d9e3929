// The package's API is what docs/clients.md says it is: the exports of the built package equal
// the list under "Node's exports", and every Node name in the names table exists in them, in
// the form the table writes: `lease.valid` a getter, `lease.keepAlive()` a method.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import ts from 'typescript';

const docs = readFileSync(new URL('../../../docs/clients.md', import.meta.url), 'utf8');

/** The backticked names of the paragraph that starts with `label` (one paragraph, up to a blank line). */
function paragraph(label) {
  const start = docs.indexOf(`\n${label}`);
  assert.notEqual(start, -1, `docs/clients.md has no paragraph starting "${label}"`);
  const end = docs.indexOf('\n\n', start + 1);
  return docs.slice(start, end === -1 ? undefined : end);
}

function codeSpans(text) {
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

/**
 * Every export of the built package's declarations (index.d.ts re-exports only), whether it is a
 * value, and the members of each exported class, read from the declaration files by TypeScript's
 * parser (no type checking: it would take seconds for what a parse says).
 */
function declared() {
  const parse = (file) => {
    const path = new URL(`../dist/${file}`, import.meta.url);
    return ts.createSourceFile(file, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
  };
  const exports = new Map();
  for (const statement of parse('index.d.ts').statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    assert.ok(statement.exportClause && ts.isNamedExports(statement.exportClause), 'index re-exports by name only');
    const module = parse(`${statement.moduleSpecifier.text.replace('./', '')}.d.ts`);
    for (const element of statement.exportClause.elements) {
      const name = element.name.text;
      const isValue = !statement.isTypeOnly && !element.isTypeOnly;
      const cls = module.statements.find((s) => ts.isClassDeclaration(s) && s.name?.text === name);
      const members = cls ? cls.members.filter((m) => m.name).map((m) => m.name.getText(module)) : [];
      const methods = cls ? cls.members.filter((m) => m.name && ts.isMethodDeclaration(m)).map((m) => m.name.getText(module)) : [];
      exports.set(name, { isValue, members, methods });
    }
  }
  return exports;
}

test('the package exports exactly what docs/clients.md lists as its API', async () => {
  const text = paragraph("Node's exports");
  const names = (part) => codeSpans(part).filter((span) => /^\w+$/.test(span)); // not the test's path
  const [values, types] = text.split('; types').map(names);
  assert.ok(values.length > 0 && types.length > 0, 'the paragraph lists classes, then "; types" and the types');
  const exports = declared();
  assert.deepEqual([...exports.keys()].sort(), [...values, ...types].sort(), 'dist/index.d.ts against the docs');
  const valueNames = [...exports].filter(([, e]) => e.isValue).map(([name]) => name);
  assert.deepEqual(valueNames.sort(), [...values].sort(), 'the classes are the values; the rest are types');
  const runtime = Object.keys(await import('../dist/index.js')).filter((k) => k !== 'default' && k !== '__esModule');
  assert.deepEqual(runtime.sort(), [...values].sort(), 'dist/index.js exports the classes and nothing else');
});

test("every Node name in docs/clients.md's names table is exported or a member of an exported class, read as the table writes it", () => {
  const table = docs.slice(docs.indexOf('\n| what | Java | Python | Node.js | Go |'));
  const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| ---')).slice(1);
  assert.ok(rows.length > 10, 'the names table has its rows');
  const exports = declared();
  const known = new Set([...exports.keys(), ...[...exports.values()].flatMap((e) => e.members)]);
  const methods = new Set([...exports.values()].flatMap((e) => e.methods));
  // A state read (`lease.valid`, `leadership.isLeader`) is a getter, never a method: one form.
  const reads = new Set([...exports.values()].flatMap((e) => e.members.filter((m) => !e.methods.includes(m))));
  const notNames = new Set(['null', 'bigint', 'await using', 'AbortSignal']);
  const missing = [];
  const misread = [];
  for (const row of rows) {
    const node = row.split(' | ')[3];
    for (const span of codeSpans(node)) {
      const [, name, call] = span.match(/^(?:new )?(?:[a-z]+\.)?([A-Za-z]\w*)(\()?/) ?? [];
      if (!name || notNames.has(span)) continue;
      const where = `${span} (${row.split(' | ')[0].slice(2)})`;
      if (!known.has(name)) missing.push(where);
      else if (!exports.has(name) && (call ? !methods.has(name) : !reads.has(name))) misread.push(where);
    }
  }
  assert.deepEqual(missing, [], 'names in the table that the package does not have');
  assert.deepEqual(misread, [], 'names the table writes as a call that are getters, or as a getter that are methods');
});
