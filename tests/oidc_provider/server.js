// Loopback OpenID Connect provider for agentgov's single sign-on tests.
//
// This is a real OpenID Provider (the `oidc-provider` package, pinned in package.json) with a
// deliberately small, test-only configuration. It is never deployed.
//
// Usage:
//   node server.js [--port N] [--clients JSON]
//
//   --port N        TCP port on 127.0.0.1 (env OIDC_PROVIDER_PORT). Default 0: the OS picks a free
//                   port, and the issuer URL (which contains it) is announced on stdout.
//   --clients JSON  JSON array of client metadata objects (env OIDC_PROVIDER_CLIENTS), e.g.
//                   [{"client_id": "rp", "client_secret": "s3cret",
//                     "redirect_uris": ["http://127.0.0.1:8080/cb"],
//                     "token_endpoint_auth_method": "client_secret_post"}]
//                   token_endpoint_auth_method defaults to client_secret_basic; any other client
//                   metadata that oidc-provider understands is passed through unchanged.
//
// Once listening it prints exactly one line on stdout:
//   ready http://127.0.0.1:<port>
// and nothing else there. Errors go to stderr. Set OIDC_PROVIDER_VERBOSE=1 to see oidc-provider's
// own development-mode notices and every protocol error the provider reports.
//
// Behaviour that tests rely on:
//   * issuer is http://127.0.0.1:<port>; discovery at /.well-known/openid-configuration.
//   * PKCE (S256) is required for every client, also confidential ones.
//   * scopes: openid, email, profile (and offline_access, oidc-provider's default).
//   * The development interaction screens are on: any login name with any password signs in, and
//     the account id (the `sub` claim) is the login name. email is the login name when it contains
//     '@', else `<login>@example.test`. email_verified is true, except for login names that start
//     with "unverified" (case-insensitive).
//   * email/email_verified/name/preferred_username go into the ID token as well as userinfo, as
//     Google, Entra ID and Okta do (oidc-provider by default keeps them out of code-flow ID tokens).
//   * Lifetimes are short (minutes); state lives in memory and dies with the process.

import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const VERBOSE = process.env.OIDC_PROVIDER_VERBOSE === '1';
const HOST = '127.0.0.1';

// oidc-provider announces its development-only defaults (and, on Node 20, an "Unsupported runtime"
// warning) through console.info/console.warn; console.info would even land on stdout. Those notices
// are expected here, so drop them unless verbose, and keep stdout for the ready line alone.
// This must happen before oidc-provider is imported: the runtime warning is printed at import time.
const EXPECTED_NOTICES = /^oidc-provider (?:NOTICE|WARNING): /;
const quietable = (write) => (...args) => {
  if (!VERBOSE && typeof args[0] === 'string' && EXPECTED_NOTICES.test(args[0])) return;
  write(...args);
};
console.warn = quietable(console.warn.bind(console));
console.info = quietable(console.error.bind(console)); // never onto stdout

function fail(message) {
  console.error(`oidc test provider: ${message}`);
  process.exit(2);
}

function readOptions() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string' },
        clients: { type: 'string' },
      },
    }));
  } catch (err) {
    fail(err.message);
  }

  const portText = values.port ?? process.env.OIDC_PROVIDER_PORT ?? '0';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`invalid port ${portText}`);

  const clientsText = values.clients ?? process.env.OIDC_PROVIDER_CLIENTS ?? '[]';
  let clients;
  try {
    clients = JSON.parse(clientsText);
  } catch (err) {
    fail(`clients is not valid JSON: ${err.message}`);
  }
  if (!Array.isArray(clients)) fail('clients must be a JSON array of client metadata objects');
  if (clients.length === 0) fail('at least one client is required (--clients or OIDC_PROVIDER_CLIENTS)');

  clients = clients.map((client) => ({
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    ...client,
  }));
  return { port, clients };
}

/** The account behind a login name typed into the development login form. */
function accountFor(login) {
  const email = login.includes('@') ? login : `${login}@example.test`;
  return {
    accountId: login,
    async claims() {
      return {
        sub: login,
        email,
        email_verified: !login.toLowerCase().startsWith('unverified'),
        name: login,
        preferred_username: login,
      };
    },
  };
}

function configuration(clients) {
  // Fresh keys per process: nothing signed by one test run is accepted by the next.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };

  return {
    clients,
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
    },
    // Put the scope-granted claims into the ID token too (the default, true, reserves them for
    // userinfo when an access token is issued, which no commercial provider does).
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: true },
      userinfo: { enabled: true },
    },
    pkce: { required: () => true },
    findAccount: async (_ctx, sub) => accountFor(sub),
    clientBasedCORS: () => false,
    ttl: {
      AccessToken: 10 * 60,
      AuthorizationCode: 60,
      ClientCredentials: 10 * 60,
      IdToken: 10 * 60,
      Interaction: 10 * 60,
      Session: 10 * 60,
      Grant: 10 * 60,
      RefreshToken: 30 * 60,
    },
    // Plain-text error page: easy to assert on from a test, and no notice about the default one.
    async renderError(ctx, out) {
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = Object.entries(out).map(([key, value]) => `${key}: ${value}`).join('\n');
    },
  };
}

async function main() {
  const { port, clients } = readOptions();
  const { default: Provider } = await import('oidc-provider');

  // Listen first, build the provider second: with --port 0 the issuer URL is only known once the
  // OS has picked the port, and nobody can send a request before the ready line names it.
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, resolve);
  });
  const issuer = `http://${HOST}:${server.address().port}`;

  const provider = new Provider(issuer, configuration(clients));
  provider.on('server_error', (_ctx, err) => console.error('oidc test provider: server error', err));
  if (VERBOSE) {
    const events = ['authorization', 'grant', 'userinfo', 'discovery', 'jwks', 'end_session', 'revocation'];
    for (const event of events.map((name) => `${name}.error`)) {
      provider.on(event, (_ctx, err) => {
        const detail = err.error_description ?? '';
        const cause = err.cause?.message ? ` (${err.cause.message})` : '';
        console.error(`oidc test provider: ${event}: ${err.message} ${detail}${cause}`);
      });
    }
  }

  // Static clients are only validated on first use; validate them now so that bad metadata fails
  // the start instead of a later request.
  for (const { client_id: clientId } of clients) {
    try {
      await provider.Client.find(clientId);
    } catch (err) {
      fail(`client ${JSON.stringify(clientId)}: ${err.message}${err.error_description ? ` (${err.error_description})` : ''}`);
    }
  }

  server.on('request', provider.callback());

  const stop = () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  process.stdout.write(`ready ${issuer}\n`);
}

main().catch((err) => fail(err.stack ?? String(err)));
