#!/usr/bin/env node
// nicecache runs its TypeScript sources directly, which needs Node's built-in type stripping.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `nicecache needs Node >= 22.18 (this is ${process.versions.node}); ` +
      "run it through npm ('npm run proxy', 'npx nicecache'), which uses the Node the project installs.",
  );
  process.exit(1);
}
await import('../src/cli/main.ts');
