/**
 * The WordPress harness's pure parts, without WordPress: its `wp-config.php`, the two request
 * logs it reads, the SQL of its post counts, and the application it hands the local stack.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lambdas/lib/config.ts';
import { loadPlaybooks } from '../../../lambdas/lib/playbooks/discovery/load.ts';
import { REPO_ROOT } from '../../../lambdas/lib/playbooks/discovery/repo.ts';
import { formSignIn } from '../../../lambdas/lib/playbooks/form-sign-in.ts';
import { parseHandledRequests, parseServerLog } from '../../../tools/real-apps/request-logs.ts';
import {
  WORDPRESS_FORM_SIGN_IN,
  wordpressApplications,
} from '../../../tools/real-apps/wordpress-application.ts';
import {
  phpString,
  type WordPressConfig,
  wordpressConfigPhp,
} from '../../../tools/real-apps/wordpress-files.ts';
import { postsWhere } from '../../../tools/real-apps/wordpress-posts.ts';

const config: WordPressConfig = {
  db: { name: 'wordpress', user: 'wordpress', password: "pa'ss\\word", host: '127.0.0.1:3307' },
  host: '127.0.0.1:8080',
  requestLog: '/tmp/x/handled-requests.jsonl',
  heartbeatMs: 1000,
};

describe('Function: phpString', () => {
  it.each([
    ['plain', "'plain'"],
    ["it's", "'it\\'s'"],
    ['back\\slash', "'back\\\\slash'"],
    ["\\'", "'\\\\\\''"],
  ])('quotes %j as a PHP single-quoted literal', (value, literal) => {
    expect(phpString(value)).toBe(literal);
  });
});

describe('Function: wordpressConfigPhp', () => {
  const php = wordpressConfigPhp(config);

  it('names the private database with its password quoted exactly', () => {
    expect(php).toContain("define('DB_NAME', 'wordpress');");
    expect(php).toContain("define('DB_PASSWORD', 'pa\\'ss\\\\word');");
    expect(php).toContain("define('DB_HOST', '127.0.0.1:3307');");
  });

  it('follows a loopback Host with a port, and falls back to the server for any other', () => {
    expect(php).toContain("preg_match('/^127\\.0\\.0\\.1:[0-9]{1,5}$/', $_SERVER['HTTP_HOST'])");
    expect(php).toContain(": '127.0.0.1:8080';");
    expect(php).toContain("define('WP_HOME', 'http://' . $belay_host);");
  });

  it('keeps WordPress off the outside network and says where the plugin logs', () => {
    for (const line of [
      "define('WP_HTTP_BLOCK_EXTERNAL', true);",
      "define('DISABLE_WP_CRON', true);",
      "define('AUTOMATIC_UPDATER_DISABLED', true);",
      "define('BELAY_HEARTBEAT_MS', 1000);",
      "define('BELAY_REQUEST_LOG', '/tmp/x/handled-requests.jsonl');",
    ])
      expect(php).toContain(line);
  });

  it('draws fresh keys and salts each time unless given', () => {
    const salt = (text: string): string | undefined => /define\('AUTH_KEY', '([^']+)'\);/.exec(text)?.[1];
    expect(salt(php)).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(salt(wordpressConfigPhp(config))).not.toBe(salt(php));
    expect(salt(wordpressConfigPhp({ ...config, salts: { AUTH_KEY: 'fixed' } }))).toBe('fixed');
  });

  it.each(['localhost:8080', '0.0.0.0:8080', '127.0.0.1', 'http://127.0.0.1:8080'])(
    'refuses the server address %j',
    (host) => {
      expect(() => wordpressConfigPhp({ ...config, host })).toThrow(RangeError);
    },
  );
});

describe('Function: parseServerLog', () => {
  it('keeps the request lines of PHP built-in server, with their status, method and path', () => {
    const log = [
      '[7] [Sat Dec  5 10:30:18 2026] PHP 8.2.36 Development Server (http://127.0.0.1:23380) started',
      '[9] [Sat Dec  5 10:30:19 2026] 127.0.0.1:40214 Accepted',
      '[9] [Sat Dec  5 10:30:20 2026] 127.0.0.1:40214 [200]: POST /wp-admin/post.php',
      '[9] [Sat Dec  5 10:30:20 2026] 127.0.0.1:40214 Closing',
      '[8] [Sat Dec  5 10:30:24 2026] 127.0.0.1:40250 [302]: GET /wp-admin/?x=1',
      '[8] [Sat Dec  5 10:30:2',
    ].join('\n');
    expect(parseServerLog(log)).toEqual([
      { status: 200, method: 'POST', url: '/wp-admin/post.php' },
      { status: 302, method: 'GET', url: '/wp-admin/?x=1' },
    ]);
  });
});

describe('Function: parseHandledRequests', () => {
  it('reads the plugin lines and leaves out a line cut short or of another shape', () => {
    const text = [
      '{"method":"POST","path":"/wp-admin/admin-ajax.php","action":"heartbeat","status":200,"at":1}',
      '{"method":"POST","path":"/wp-login.php","action":null,"status":302,"at":2}',
      '{"method":"POST","path":"/wp-admin/post.php","act',
      '{"path":"/x"}',
      '',
    ].join('\n');
    expect(parseHandledRequests(text)).toEqual([
      { method: 'POST', path: '/wp-admin/admin-ajax.php', action: 'heartbeat', status: 200, at: 1 },
      { method: 'POST', path: '/wp-login.php', action: null, status: 302, at: 2 },
    ]);
  });
});

describe('Function: postsWhere', () => {
  it('counts posts of type post by default', () => {
    expect(postsWhere()).toEqual({ sql: 'post_type = ?', params: ['post'] });
  });

  it('compares titles and content byte for byte, with every value a parameter', () => {
    const title = "x' OR '1'='1";
    expect(postsWhere({ status: 'draft', title, contentContains: 'ref 1' })).toEqual({
      sql: 'post_type = ? AND post_status = ? AND BINARY post_title = BINARY ? AND LOCATE(BINARY ?, BINARY post_content) > 0',
      params: ['post', 'draft', title, 'ref 1'],
    });
  });
});

describe('Function: wordpressApplications', () => {
  it('gives the local stack the site under the name asked for', () => {
    expect(wordpressApplications({ url: 'http://127.0.0.1:23083' })).toEqual({
      wordpress: { baseUrl: 'http://127.0.0.1:23083' },
    });
    expect(wordpressApplications({ url: 'http://127.0.0.1:23083' }, 'blog')).toEqual({
      blog: { baseUrl: 'http://127.0.0.1:23083' },
    });
  });

  it('refuses a name the local stack would refuse', () => {
    expect(() => wordpressApplications({ url: 'http://127.0.0.1:1' }, 'Blog!')).toThrow(ConfigError);
  });

  it("describes WordPress's sign-in as formSignIn accepts it", () => {
    expect(() => formSignIn({ name: 'wordpress', ...WORDPRESS_FORM_SIGN_IN })).not.toThrow();
  });
});

describe('Example: examples/wordpress', () => {
  it('loads as the local stack loads a playbook folder, signing in as the harness describes', async () => {
    const { playbooks } = await loadPlaybooks([join(REPO_ROOT, 'examples', 'wordpress')]);
    expect(playbooks.map((p) => p.playbook.id)).toEqual(['wordpress-quick-draft@1']);
    const loaded = playbooks[0];
    if (loaded?.kind !== 'declarative') throw new Error('expected the declarative example');
    expect(loaded.spec.applications.wordpress?.formSignIn).toEqual(WORDPRESS_FORM_SIGN_IN);
    // The draft is approved on what the form would submit (its effect), not by a plain approval.
    expect(loaded.playbook.steps.map((s) => [s.id, s.kind, s.approve ?? s.needsApproval === true])).toEqual([
      ['wp-sign-in', 'read', false],
      ['create-draft', 'write', 'effect'],
      ['read-draft-id', 'read', false],
    ]);
  });
});
