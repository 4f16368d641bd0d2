import { z } from 'zod';
import type { RegisterPaths } from '../openapi-kit.ts';
import { CONSOLE_ROUTES } from './routes.ts';

/**
 * The console's routes in the OpenAPI document: HTML pages and the console's own actions, for
 * browsers (a session cookie from `POST /console/sign-in`, never a bearer key). Programs use the
 * bearer routes instead.
 */
export const registerConsolePaths: RegisterPaths = (r) => {
  for (const route of CONSOLE_ROUTES) {
    const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    const action = route.path.startsWith('/console/api/');
    r.registerPath({
      method: route.method.toLowerCase() as 'get' | 'post',
      path: route.path,
      tags: ['console'],
      summary: action
        ? 'Console action (session cookie and X-Belay-CSRF header; same role as the bearer route)'
        : route.method === 'POST'
          ? 'Console sign-in or sign-out (form post)'
          : 'Console page or asset (session cookie)',
      ...(names.length > 0
        ? { request: { params: z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) } }
        : {}),
      responses: {
        200: {
          description: action ? 'JSON, as the bearer route answers.' : 'HTML, CSS, JavaScript or a JPEG.',
        },
        303: {
          description:
            'A redirect: to the sign-in page when there is no session; a form posted without the script, on to the next page (the job, or the hosted sign-in of an account being connected).',
        },
      },
    });
  }
};
