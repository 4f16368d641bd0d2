/**
 * `startsAt`: the precondition and restore of a step that starts on one page of its
 * application, the shape most steps have.
 */
import type { Application, Step, StepContext } from './contract.ts';
import { appUrl, checkStart, goto } from './page.ts';
import type { Target } from './target.ts';

/** Where a step starts. */
export interface StartsAtSpec<I> {
  /** The application's name (key of `Playbook.applications`). */
  app: string;
  application: Application;
  /**
   * The page the step starts on: a path (`/cart`; the restore goes there and the precondition
   * wants exactly it) or a function of the context (a path with a query, or one made from an
   * earlier step's evidence); `pathPattern` then says which paths count.
   */
  path: string | ((ctx: StepContext<I>) => string);
  /** Paths that count as the start (default: exactly `path`, without its query). */
  pathPattern?: RegExp;
  /** The element the step acts on first (CSS or a target): missing on the right page = the layout changed. */
  ready: Target;
  /** The step needs a signed-in account (default true). */
  signedIn?: boolean;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The pattern of exactly `path` (its query left out): where a step that starts at `path` starts. */
export function exactPath(path: string): RegExp {
  return new RegExp(`^${escapeRegExp(path.split('?')[0] ?? '')}$`);
}

/**
 * Precondition and restore of a step that starts at one page once its `ready` element shows:
 * the precondition tells a signed-out page, a wrong page and a changed layout apart; the
 * restore navigates back to the page from server-side state (it runs in a new session, and
 * after every human decision, so it must rebuild the page from what the application holds).
 *
 * @example
 * export const openCart: Step<Inputs> = {
 *   id: 'open-cart', title: 'Open the cart', kind: 'read', app: 'shop',
 *   ...startsAt({ app: 'shop', application: shop, path: '/cart/added', ready: tid('view-cart') }),
 *   run: (page) => clickAndWait(page, tid('view-cart')),
 *   verify: async (page) => ...,
 * };
 */
export function startsAt<I = Record<string, unknown>>(
  spec: StartsAtSpec<I>,
): Pick<Step<I>, 'precondition' | 'restore'> {
  const pathOf = (ctx: StepContext<I>): string =>
    typeof spec.path === 'string' ? spec.path : spec.path(ctx);
  const pattern = (ctx: StepContext<I>): RegExp => spec.pathPattern ?? exactPath(pathOf(ctx));
  return {
    precondition: (page, ctx) =>
      checkStart(page, ctx, {
        app: spec.app,
        application: spec.application,
        path: pattern(ctx),
        ready: spec.ready,
        ...(spec.signedIn === undefined ? {} : { signedIn: spec.signedIn }),
      }),
    restore: async (page, ctx) => goto(page, appUrl(ctx, spec.app, pathOf(ctx))),
  };
}
