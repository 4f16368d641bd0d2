/** A small cookie-keeping HTTP client for the demo sites' tests (redirects are not followed). */
import { generate } from 'otplib';

export interface SiteReply {
  status: number;
  location: string | undefined;
  body: string;
}

export class SiteClient {
  readonly baseUrl: string;
  readonly cookies = new Map<string, string>();

  /** The `Cookie` header this client sends. */
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  async request(method: string, path: string, form?: Record<string, string>): Promise<SiteReply> {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = this.cookieHeader();
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      redirect: 'manual',
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (/Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, location: res.headers.get('location') ?? undefined, body: await res.text() };
  }

  get(path: string): Promise<SiteReply> {
    return this.request('GET', path);
  }

  post(path: string, form: Record<string, string>): Promise<SiteReply> {
    return this.request('POST', path, form);
  }

  /** Password sign-in, plus the TOTP code when a secret is given. Returns the last reply. */
  async signIn(username: string, password: string, totpSecret?: string): Promise<SiteReply> {
    const reply = await this.post('/signin', { username, password, next: '/' });
    if (reply.location !== '/signin/code' || !totpSecret) return reply;
    return this.post('/signin/code', { code: await generate({ secret: totpSecret }) });
  }
}

/** What {@link toReview} puts in the basket and on the order. */
export interface Basket {
  items: Record<string, number>;
  address?: Record<string, string>;
  shipping?: 'standard' | 'express';
}

/**
 * A signed-in shopper's basket brought to the order review over HTTP: the items added, an
 * address, the shipping method and the saved Visa 4242, each step answered as the shop answers
 * it (else this throws with the reply).
 */
export async function toReview(client: SiteClient, basket: Basket): Promise<void> {
  const expect = (reply: SiteReply, what: string, location?: string): void => {
    if (reply.status === 303 && (location === undefined || reply.location === location)) return;
    throw new Error(`${what}: ${reply.status} ${reply.location ?? ''}, not 303 ${location ?? ''}`);
  };
  for (const [sku, quantity] of Object.entries(basket.items))
    expect(await client.post('/cart/add', { sku, quantity: String(quantity) }), `add ${sku}`);
  const address = basket.address ?? {
    name: 'A',
    line1: '1 A St',
    city: 'Bath',
    postcode: 'BA1 1AA',
    country: 'GB',
  };
  expect(await client.post('/checkout/address', address), 'address', '/checkout/shipping');
  const method = basket.shipping ?? 'express';
  expect(await client.post('/checkout/shipping', { method }), 'shipping', '/checkout/payment');
  expect(await client.post('/checkout/payment', { method: 'pm_visa_4242' }), 'payment', '/checkout/review');
}

/** The `data-<name>` value of the first element carrying `data-testid="<testid>"`. */
export function dataOf(html: string, testid: string, name: string): string | undefined {
  const tag = new RegExp(`<[^>]*data-testid="${testid}"[^>]*>`).exec(html)?.[0];
  return tag ? new RegExp(`data-${name}="([^"]*)"`).exec(tag)?.[1] : undefined;
}

/** The messages of the page's error element (`role="alert"`). */
export function errorsOf(html: string): string[] {
  const box = /<div[^>]*role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '';
  return [...box.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) =>
    (m[1] ?? '').replace(/&#39;/g, "'").replace(/&quot;/g, '"'),
  );
}
