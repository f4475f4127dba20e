// The page a principal's sign-in link opens first, on loadout's own server (or its loopback
// listener over stdio): whose loadout sign-in it is, to which server, and a link on to that
// server's authorization page. Whoever signs in there gives the principal the link was made for
// their access, so a link handed to someone else says so before they sign in, not after.
import type { ServerResponse } from 'node:http';

/** What the page names: the server, the principal (as a person would know them) and where to go on. */
export interface SignInPage {
  readonly server: string;
  readonly who: string;
  readonly authorizationUrl: string;
}

/** Answer `response` with the page before the authorization page of `page.server`. */
export function showSignInPage(response: ServerResponse, page: SignInPage): void {
  const server = escapeHtml(page.server);
  const who = escapeHtml(page.who);
  const html = [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>loadout: sign in to ${server} for ${who}</title></head><body>`,
    `<h1>Sign in to ${server} for ${who}</h1>`,
    `<p>This link connects <strong>${server}</strong> to the loadout account of <strong>${who}</strong>:`,
    `loadout will call ${server} for ${who} with the access of whoever signs in next.</p>`,
    `<p>Continue only if you are ${who}. If someone sent you this link, close this page:`,
    `signing in would give them your access to ${server}.</p>`,
    `<p><a href="${escapeHtml(page.authorizationUrl)}">Continue to ${server}</a></p>`,
    '</body></html>',
    '',
  ].join('\n');
  response.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    // Not kept, not framed (a framed page could hide whose sign-in it is), and the state in its
    // URL is not sent on as a referrer.
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    connection: 'close',
  });
  response.end(html);
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!);
}
