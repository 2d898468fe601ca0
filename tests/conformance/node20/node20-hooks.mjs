// Serves fs-shim.mjs in place of node:fs to the harness modules only.
const shim = new URL('./fs-shim.mjs', import.meta.url).href;
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') &&
      /\/@modelcontextprotocol\/conformance[^/]*\//.test(context.parentURL ?? '')) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
