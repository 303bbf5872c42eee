// Offline Google credentials for the Vertex AI clients: every one of them wants an OAuth
// access token (from Application Default Credentials, a GoogleAuth, or an auth client).
// Each adapter hands its library an OAuth2Client, from the google-auth-library copy that
// library itself resolves, holding a fake access token that expires in an hour: the
// library adds `Authorization: Bearer ...` without any token refresh, so nothing ever
// reaches Google (and the replay fetch answers every request anyway).
import { createRequire } from 'node:module';

export const PROJECT = 'harness-project';
export const GEMINI_LOCATION = 'us-central1';
export const CLAUDE_REGION = 'us-east5';

/** google-auth-library as `pkg` resolves it (a nested copy where npm nested one). */
export function googleAuthLibraryOf(pkg) {
  return createRequire(import.meta.resolve(pkg))('google-auth-library');
}

/** An OAuth2Client of that copy with a fake, unexpired access token. */
export function offlineAuthClient({ OAuth2Client }) {
  const client = new OAuth2Client();
  client.setCredentials({ access_token: 'harness-token', token_type: 'Bearer', expiry_date: Date.now() + 3600_000 });
  return client;
}
