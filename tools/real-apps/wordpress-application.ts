/**
 * A running WordPress as one of Belay's target applications: the `--applications` entry of the
 * local stack (`npm start`, `npm run playbook -- test`, `npm run chaos`), the account file that
 * `--account <app>=@file.json` connects for the demo tenant, and how the SDK's generic form
 * sign-in (`formSignIn`) signs in to WordPress.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { type ApplicationConfig, parseApplications } from '../../lambdas/lib/engine/applications.ts';
import type { FormSignInConfig } from '../../lambdas/lib/playbooks/form-sign-in.ts';
import type { RunningWordPress } from './wordpress.ts';

/** The application name the examples use. */
export const WORDPRESS_APP = 'wordpress';

/**
 * WordPress's sign-in for `formSignIn` (a declarative playbook's `applications.<name>.formSignIn`):
 * `wp-login.php` with `#user_login`, `#user_pass` and `#wp-submit`; signed in, every admin page
 * shows the toolbar (`#wpadminbar`); a refused sign-in is said in `#login_error`.
 */
export const WORDPRESS_FORM_SIGN_IN: Omit<FormSignInConfig, 'name'> = {
  signInPath: '/wp-login.php',
  returnParam: 'redirect_to',
  username: '#user_login',
  password: '#user_pass',
  submit: '#wp-submit',
  signedIn: '#wpadminbar',
  error: '#login_error',
};

/**
 * The `--applications` value for a running WordPress, checked as the local stack checks it.
 *
 * @throws ConfigError when `name` is not a valid application name
 * @example
 * JSON.stringify(wordpressApplications(wp)); // {"wordpress":{"baseUrl":"http://127.0.0.1:23083"}}
 */
export function wordpressApplications(
  wp: Pick<RunningWordPress, 'url'>,
  name: string = WORDPRESS_APP,
): Record<string, ApplicationConfig> {
  return parseApplications({ [name]: { baseUrl: wp.url } }, 'wordpressApplications');
}

/**
 * Writes the administrator's credentials as `--account <app>=@file.json` reads them
 * (`{"username", "password"}`), readable by the current user only.
 */
export async function writeAccountFile(wp: Pick<RunningWordPress, 'admin'>, file: string): Promise<void> {
  const { username, password } = wp.admin;
  await writeFile(file, `${JSON.stringify({ username, password })}\n`, { mode: 0o600 });
  // A file that was already there keeps its mode on a write.
  await chmod(file, 0o600);
}
