// A certified authorization server for the auth interop tests: node `oidc-provider` 9.x.
//
//   node oidc_provider.mjs            (OIDC_PROVIDER_DIR: the npm project holding oidc-provider)
//
// Listens on 127.0.0.1, a port the system picks, and prints "ISSUER http://127.0.0.1:PORT".
// The set-up a new user meets, each feature the library's own default but
// for what an MCP deployment turns on:
//
// * dynamic client registration (open), PKCE required (S256), resource
//   indicators (RFC 8707: every resource under the loopback origin is a
//   resource server, with scope "mcp:tools" and opaque access tokens),
//   introspection (for the resource server, client "mcp-rs"), revocation;
// * rotating refresh tokens, issued with offline_access;
// * DPoP offered, as oidc-provider 9 does by default;
// * the development login and consent pages (any login is accepted).
//
// Environment: ACCESS_TTL (seconds, default 3600), ACCESS_NO_EXPIRY=1 (the
// token response then still names one: oidc-provider always does), RS_SECRET
// (the resource server's introspection secret, default "rs-secret").
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.OIDC_PROVIDER_DIR;
if (!dir) {
  process.stderr.write('OIDC_PROVIDER_DIR is not set\n');
  process.exit(2);
}
const { default: Provider } = await import(
  pathToFileURL(path.join(dir, 'node_modules', 'oidc-provider', 'lib', 'index.js')).href
);

const accessTtl = Number(process.env.ACCESS_TTL || 3600);
const rsSecret = process.env.RS_SECRET || 'rs-secret';

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'mcp-rs',
      client_secret: rsSecret,
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
  ],
  scopes: ['openid', 'offline_access', 'mcp:tools'],
  pkce: { required: () => true },
  rotateRefreshToken: true,
  ttl: {
    AccessToken: accessTtl,
    AuthorizationCode: 60,
    Grant: 3600,
    Interaction: 600,
    RefreshToken: 86400,
    Session: 3600,
  },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => (oneOf ? oneOf[0] : undefined),
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => {
        if (!resourceIndicator.startsWith('http://127.0.0.1:')) {
          throw new Error('not a resource of this test');
        }
        return { scope: 'mcp:tools', accessTokenFormat: 'opaque', audience: resourceIndicator };
      },
    },
  },
});
provider.proxy = false;

server.on('request', provider.callback());
process.stdout.write(`ISSUER ${issuer}\n`);
process.on('SIGTERM', () => process.exit(0));
