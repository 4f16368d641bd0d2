/**
 * A private copy of Debian's WordPress for one test: its files copied out of `/usr/share/wordpress`
 * (symbolic links into `/etc` and `/usr/share/javascript` resolved), a `wp-config.php` of its own
 * instead of Debian's (which reads `/etc/wordpress/config-<host>.php`), and the test site's
 * must-use plugin. Nothing is written to `/etc` or `/usr/share`.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where Debian's `wordpress` package puts WordPress. */
export const WORDPRESS_SOURCE = '/usr/share/wordpress';

/** The test site's PHP files (the must-use plugin, the installer) beside this module. */
export const WORDPRESS_SUPPORT_DIR = join(dirname(fileURLToPath(import.meta.url)), 'wordpress');

/** WordPress's eight keys and salts (cookies and nonces are signed with them). */
const SALT_NAMES = [
  'AUTH_KEY',
  'SECURE_AUTH_KEY',
  'LOGGED_IN_KEY',
  'NONCE_KEY',
  'AUTH_SALT',
  'SECURE_AUTH_SALT',
  'LOGGED_IN_SALT',
  'NONCE_SALT',
] as const;

/** What a private WordPress's `wp-config.php` says. */
export interface WordPressConfig {
  db: { name: string; user: string; password: string; host: string };
  /** `127.0.0.1:<port>` of the web server: the site's address when a request names none of its own. */
  host: string;
  /** Where the must-use plugin logs the unsafe requests WordPress handled. */
  requestLog: string;
  /** The Heartbeat's period on admin pages in milliseconds; 0 leaves WordPress's own (15 s at least). */
  heartbeatMs: number;
  /** The eight keys and salts; fresh random ones when not given. */
  salts?: Partial<Record<(typeof SALT_NAMES)[number], string>>;
}

/** A PHP single-quoted string literal holding `value` exactly. */
export function phpString(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/**
 * The text of a private WordPress's `wp-config.php`.
 *
 * The site's address follows the request's `Host` when it is a loopback address with a port
 * (`127.0.0.1:<port>`), and is `config.host` otherwise: WordPress prints absolute URLs on every
 * page, so a loopback proxy put in front of it (`npm run playbook -- test` puts one before every
 * application) keeps the browser behind the proxy only if the site names itself by the proxy's
 * address. Any other `Host` (a name, another address) gets `config.host`, never itself.
 *
 * No outside network: external HTTP requests are refused (`WP_HTTP_BLOCK_EXTERNAL`; update
 * checks, news feeds), WP-Cron and automatic updates are off.
 */
export function wordpressConfigPhp(config: WordPressConfig): string {
  if (!/^127\.0\.0\.1:\d{1,5}$/.test(config.host))
    throw new RangeError('host must be 127.0.0.1:<port>, the web server on loopback');
  const salts = SALT_NAMES.map(
    (name) =>
      `define('${name}', ${phpString(config.salts?.[name] ?? randomBytes(48).toString('base64url'))});`,
  );
  return `<?php
// A private WordPress for Belay's tests (tools/real-apps/wordpress.ts), not Debian's configuration.
define('DB_NAME', ${phpString(config.db.name)});
define('DB_USER', ${phpString(config.db.user)});
define('DB_PASSWORD', ${phpString(config.db.password)});
define('DB_HOST', ${phpString(config.db.host)});
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
$table_prefix = 'wp_';

${salts.join('\n')}

// The address the request used when it is loopback with a port (a loopback proxy in front), else the server's own.
$belay_host = isset($_SERVER['HTTP_HOST']) && preg_match('/^127\\.0\\.0\\.1:[0-9]{1,5}$/', $_SERVER['HTTP_HOST'])
    ? $_SERVER['HTTP_HOST']
    : ${phpString(config.host)};
define('WP_HOME', 'http://' . $belay_host);
define('WP_SITEURL', 'http://' . $belay_host);

define('WP_HTTP_BLOCK_EXTERNAL', true);
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_AUTO_UPDATE_CORE', false);
define('WP_DEBUG', false);

define('BELAY_HEARTBEAT_MS', ${Math.max(0, Math.round(config.heartbeatMs))});
define('BELAY_REQUEST_LOG', ${phpString(config.requestLog)});

if (!defined('ABSPATH')) {
    define('ABSPATH', __DIR__ . '/');
}
require_once ABSPATH . 'wp-settings.php';
`;
}

/**
 * Copies WordPress from `source` to `siteDir` (links resolved, Debian's `wp-config.php` and
 * Apache's `.htaccess` left out), writes `config` as its `wp-config.php` and installs the test
 * site's must-use plugin.
 */
export async function prepareWordPressFiles(
  siteDir: string,
  config: WordPressConfig,
  source: string = WORDPRESS_SOURCE,
): Promise<void> {
  const skip = new Set(['wp-config.php', '.htaccess']);
  await cp(source, siteDir, {
    recursive: true,
    dereference: true,
    filter: (from) => !skip.has(relative(source, from)),
  });
  await writeFile(join(siteDir, 'wp-config.php'), wordpressConfigPhp(config), { mode: 0o600 });
  const muPlugins = join(siteDir, 'wp-content', 'mu-plugins');
  await mkdir(muPlugins, { recursive: true });
  await cp(join(WORDPRESS_SUPPORT_DIR, 'mu-plugins'), muPlugins, { recursive: true });
}
