// The person at the browser in OAuth tests: an SDK OAuthClientProvider that keeps what the SDK
// hands it in memory and, asked to send the user to the authorization page, follows that page's
// redirects (with its cookies) until they reach the client's redirect URL, as a browser would.
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthClientProvider, OAuthTokens } from '@modelcontextprotocol/client';

// Nothing listens here: the browser stops at the redirect and hands its query to the test.
const REDIRECT_URL = 'http://127.0.0.1:9/callback';

/** An OAuth client whose user consents at once. */
export class BrowserOAuthClient implements OAuthClientProvider {
  #information: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  /** The query the authorization server redirected back with (code, state, iss), once it has. */
  callback: URLSearchParams | undefined;

  get redirectUrl(): string {
    return REDIRECT_URL;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'loadout identity test',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#information;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.#information = information;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const cookies = new Map<string, string>();
    let url = authorizationUrl.href;
    for (let hop = 0; hop < 10; hop++) {
      if (url.startsWith(REDIRECT_URL)) {
        this.callback = new URL(url).searchParams;
        return;
      }
      const response = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
      });
      for (const header of response.headers.getSetCookie()) {
        const [pair] = header.split(';');
        const at = pair!.indexOf('=');
        cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1));
      }
      const location = response.headers.get('location');
      if (!location) throw new Error(`the authorization page answered ${response.status} without a redirect: ${await response.text()}`);
      url = new URL(location, url).href;
    }
    throw new Error('too many redirects on the authorization page');
  }
}

/** A sign-in link's page on loadout, as the person at the browser reads it: its text, and where its "Continue" leads. */
export interface SignInPageRead {
  readonly status: number;
  /** The page's words, without markup. */
  readonly text: string;
  /** The authorization server's page its continue link points at. */
  readonly authorizationUrl: string;
}

/** Open a per-user sign-in link (loadout's page) and read whose sign-in it says it is and where it continues. */
export async function openSignInPage(link: string): Promise<SignInPageRead> {
  const response = await fetch(link);
  const html = await response.text();
  const href = /<a href="([^"]+)">Continue to /.exec(html)?.[1];
  if (response.status !== 200 || href === undefined) throw new Error(`not a sign-in page (${response.status}): ${html}`);
  const unescaped = (text: string): string =>
    text.replace(/&(amp|lt|gt|quot|#39);/g, (_all, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);
  return {
    status: response.status,
    text: unescaped(html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ')).trim(),
    authorizationUrl: unescaped(href),
  };
}
