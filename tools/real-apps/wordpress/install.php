<?php
/*
 * Installs WordPress in the site folder given as the first argument (its wp-config.php written),
 * as WordPress's own installer does, from the environment: BELAY_WP_HOST (127.0.0.1:<port>),
 * BELAY_WP_TITLE, BELAY_WP_ADMIN_USER, BELAY_WP_ADMIN_EMAIL and BELAY_WP_ADMIN_PASSWORD (never on
 * a command line). Prints one JSON line: the administrator's user id and WordPress's version.
 * Exit status: 0 installed, 3 already installed, anything else a failure.
 */
if (PHP_SAPI !== 'cli' || !isset($argv[1])) {
    exit(2);
}
define('WP_INSTALLING', true);
$_SERVER['HTTP_HOST'] = (string) getenv('BELAY_WP_HOST');
$_SERVER['REQUEST_URI'] = '/';
require $argv[1] . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
if (is_blog_installed()) {
    fwrite(STDERR, "WordPress is already installed\n");
    exit(3);
}
$result = wp_install(
    (string) getenv('BELAY_WP_TITLE'),
    (string) getenv('BELAY_WP_ADMIN_USER'),
    (string) getenv('BELAY_WP_ADMIN_EMAIL'),
    false,
    '',
    (string) getenv('BELAY_WP_ADMIN_PASSWORD')
);
echo json_encode(['userId' => (int) $result['user_id'], 'version' => $GLOBALS['wp_version']]), "\n";
