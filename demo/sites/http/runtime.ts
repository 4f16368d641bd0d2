/**
 * The per-site runtime: persisted state (sessions, outbox, fault flags, the site's data),
 * the request log, and the helpers handlers share (who is signed in, the page context,
 * the "drop the next write's response" fault).
 */
import { randomBytes } from 'node:crypto';
import type { DemoAccount } from '../../accounts.ts';
import { DEFAULT_FAULTS, type DropMode, type FaultFlags, REFUSAL_MESSAGE } from './faults.ts';
import type { Layout, NavLink, PageContext, SiteInfo } from './html.ts';
import type { Handler, Router, SiteRequest, SiteResponse } from './router.ts';
import { redirect, withQuery } from './router.ts';
import type { JsonStore } from './store.ts';

/** A browser's sign-in on one site. */
export interface SessionRecord {
  id: string;
  username: string;
  /** `mfa_pending`: the password was right, the second factor is still missing. */
  stage: 'signed_in' | 'mfa_pending';
  createdAt: string;
  /** Where to go after the second factor. */
  next: string;
  /** Outbox accounts: the code that was sent, and until when it is valid. */
  code?: string;
  codeExpiresAt?: string;
  failedCodes: number;
}

/** A one-time code "sent by SMS": the admin outbox is the phone a person reads. */
export interface OutboxMessage {
  id: string;
  username: string;
  to: string;
  code: string;
  text: string;
  sentAt: string;
}

export interface SiteState<D> {
  sessions: Record<string, SessionRecord>;
  outbox: OutboxMessage[];
  faults: FaultFlags;
  /** How many write requests carried each idempotency key (committed or answered from the first). */
  keyAttempts: Record<string, number>;
  data: D;
}

/** One committed write, as the admin endpoint lists it. */
export type AdminWriteItem = { key: string } & Record<string, unknown>;

/** What a site is: its pages, its seed data and its list of committed writes. */
export interface SiteDefinition<D> {
  info: SiteInfo;
  accounts: readonly DemoAccount[];
  seed(): D;
  /** Where a sign-in lands when no `next` is given. */
  homePath: string;
  nav(signedIn: boolean): NavLink[];
  headerExtra?(pc: PageContext, req: SiteRequest, rt: SiteRuntime<D>): string;
  routes(router: Router, rt: SiteRuntime<D>): void;
  /** The committed writes (orders, record changes), each with its idempotency key. */
  writes(data: D): { kind: string; items: AdminWriteItem[] };
  /** The files it served as downloads (reads, counted), each named by `file`; none when it serves none. */
  downloads?(data: D): ({ file: string } & Record<string, unknown>)[];
}

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  at: string;
}

/** The initial persisted state of a site. */
export function initialState<D>(def: SiteDefinition<D>): SiteState<D> {
  return {
    sessions: {},
    outbox: [],
    faults: { ...DEFAULT_FAULTS },
    keyAttempts: {},
    data: def.seed(),
  };
}

/** A random id (hex). */
export function randomId(bytes = 16): string {
  return randomBytes(bytes).toString('hex');
}

/** Only same-site relative paths are followed after sign-in. */
export function safeNext(next: string | null | undefined, fallback: string): string {
  if (!next?.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return fallback;
  return next;
}

export class SiteRuntime<D> {
  readonly def: SiteDefinition<D>;
  readonly store: JsonStore<SiteState<D>>;
  readonly adminToken: string;
  readonly requestLog: RequestLogEntry[] = [];
  readonly postsByPath: Record<string, number> = {};

  constructor(def: SiteDefinition<D>, store: JsonStore<SiteState<D>>, adminToken: string) {
    this.def = def;
    this.store = store;
    this.adminToken = adminToken;
  }

  get cookieName(): string {
    return `${this.def.info.name}_sid`;
  }

  get data(): D {
    return this.store.state.data;
  }

  get layout(): Layout {
    return this.store.state.faults.changedLayout ? 'changed' : 'classic';
  }

  /** The session record behind the request's cookie, in any stage. */
  session(req: SiteRequest): SessionRecord | undefined {
    const id = req.cookies[this.cookieName];
    return id ? this.store.state.sessions[id] : undefined;
  }

  /** The signed-in account, or undefined. */
  user(req: SiteRequest): DemoAccount | undefined {
    const s = this.session(req);
    if (s?.stage !== 'signed_in') return undefined;
    return this.def.accounts.find((a) => a.username === s.username);
  }

  /** The context for rendering a page for this request. */
  page(req: SiteRequest): PageContext {
    const user = this.user(req);
    const pc: PageContext = {
      site: this.def.info,
      layout: this.layout,
      nav: this.def.nav(Boolean(user)),
      ...(user ? { user: { displayName: user.displayName } } : {}),
      ...(this.store.state.faults.busyPages ? { busy: true } : {}),
    };
    if (this.def.headerExtra) pc.headerExtra = this.def.headerExtra(pc, req, this);
    return pc;
  }

  /** Wraps a handler that needs a signed-in account; others are sent to the sign-in page. */
  signedIn(
    handler: (req: SiteRequest, account: DemoAccount) => SiteResponse | Promise<SiteResponse>,
  ): Handler {
    return (req) => {
      const account = this.user(req);
      if (account) return handler(req, account);
      const back = req.method === 'GET' ? req.path + (req.query.size ? `?${req.query}` : '') : undefined;
      return redirect(withQuery('/signin', { next: back }));
    };
  }

  /** Counts a write request that carries an idempotency key. */
  noteKeyAttempt(key: string): void {
    const attempts = this.store.state.keyAttempts;
    attempts[key] = (attempts[key] ?? 0) + 1;
  }

  /** The drop mode once after the "drop the next write's response" fault was armed (and disarms it). */
  takeDropFault(): DropMode | undefined {
    const faults = this.store.state.faults;
    if (!faults.dropNextWriteResponse) return undefined;
    faults.dropNextWriteResponse = false;
    this.store.save();
    return faults.dropMode ?? 'status-line';
  }

  /** The response of a committed write: dropped when the fault is armed. */
  committed(response: SiteResponse): SiteResponse {
    const drop = this.takeDropFault();
    return drop ? { ...response, dropAfterCommit: drop } : response;
  }

  /** The words a write is refused with while the `refuseWrites` fault is on; otherwise none. */
  get refusal(): string | undefined {
    return this.store.state.faults.refuseWrites ? REFUSAL_MESSAGE : undefined;
  }

  /**
   * The earlier write made with this idempotency key, when the site de-duplicates; never one
   * when it does not (every request commits a new record).
   */
  earlierWrite<W>(find: () => W | undefined): W | undefined {
    return this.store.state.faults.dedupe === false ? undefined : find();
  }

  /**
   * Whether the site guards a write by its state (a save from a stale version of a record is
   * refused, a placed order empties the basket): only while it de-duplicates. Off, every write
   * request that arrives commits again.
   */
  get guardsByState(): boolean {
    return this.store.state.faults.dedupe !== false;
  }

  logRequest(entry: RequestLogEntry): void {
    this.requestLog.push(entry);
    if (this.requestLog.length > 2000) this.requestLog.splice(0, this.requestLog.length - 2000);
    if (entry.method === 'POST') this.postsByPath[entry.path] = (this.postsByPath[entry.path] ?? 0) + 1;
  }

  clearRequestLog(): void {
    this.requestLog.length = 0;
    for (const k of Object.keys(this.postsByPath)) delete this.postsByPath[k];
  }
}

export { DEFAULT_FAULTS, DROP_MODES, type DropMode, type FaultFlags } from './faults.ts';
