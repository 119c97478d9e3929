#!/usr/bin/env node
// Copies the contract into the package and regenerates its TypeScript declarations.
//
//   node scripts/generate.mjs           copy proto/redlock/v1/{lock,election}.proto from the
//                                       repository, regenerate src/proto/ with
//                                       proto-loader-gen-types
//   node scripts/generate.mjs --check   change nothing; exit 1 when a proto copy in the package
//                                       differs from the repository's, or when regenerating
//                                       the declarations gives something else than src/proto/
//
// The load options here must match those of src/service.ts.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// election.proto imports lock.proto; both are copied and generated together.
const PROTOS = ['lock.proto', 'election.proto'].map((name) => join('redlock', 'v1', name));
const upstreamDir = resolve(pkg, '..', '..', 'proto', 'src', 'main', 'proto');
const upstream = (proto) => join(upstreamDir, proto);
const copy = (proto) => join(pkg, 'proto', proto);
const committedTypes = join(pkg, 'src', 'proto');
const check = process.argv.includes('--check');

function generate(outDir) {
  const bin = join(pkg, 'node_modules', '@grpc', 'proto-loader', 'build', 'bin', 'proto-loader-gen-types.js');
  execFileSync(process.execPath, [bin,
    '--longs=String', '--enums=String', '--defaults', '--oneofs', '--includeComments',
    '--grpcLib=@grpc/grpc-js', '-I', 'proto', '-O', outDir, ...PROTOS],
    // A relative include dir: the generated files name the proto by a path that does not
    // depend on where the repository is checked out.
    { cwd: pkg, stdio: 'inherit' });
}

function files(dir) {
  const out = new Map();
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

for (const proto of PROTOS) {
  if (!existsSync(upstream(proto))) {
    console.error(`generate: the repository's contract is not at ${upstream(proto)}`);
    process.exit(2);
  }
}

if (!check) {
  for (const proto of PROTOS) copyFileSync(upstream(proto), copy(proto));
  rmSync(committedTypes, { recursive: true, force: true });
  generate(committedTypes);
  console.log(`generate: copied ${PROTOS.map((p) => relative(pkg, copy(p))).join(' and ')} `
    + `and regenerated ${relative(pkg, committedTypes)}/`);
  process.exit(0);
}

const problems = [];
for (const proto of PROTOS) {
  if (!existsSync(copy(proto)) || readFileSync(copy(proto), 'utf8') !== readFileSync(upstream(proto), 'utf8')) {
    problems.push(`${relative(pkg, copy(proto))} differs from ${upstream(proto)}`);
  }
}
const tmp = mkdtempSync(join(tmpdir(), 'redlockd-node-gen-'));
try {
  generate(tmp);
  const fresh = files(tmp);
  const committed = files(committedTypes);
  for (const [name, text] of fresh) {
    if (!committed.has(name)) problems.push(`src/proto/${name} is missing`);
    else if (committed.get(name) !== text) problems.push(`src/proto/${name} is out of date`);
  }
  for (const name of committed.keys()) {
    if (!fresh.has(name)) problems.push(`src/proto/${name} is not generated any more`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
if (problems.length > 0) {
  for (const p of problems) console.error(`drift: ${p}`);
  console.error('drift: run `npm run generate` in clients/node and commit the result');
  process.exit(1);
}
console.log('drift: the proto copies and src/proto/ match the contract');
