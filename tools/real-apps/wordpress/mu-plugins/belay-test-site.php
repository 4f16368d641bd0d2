<?php
/**
 * Plugin Name: Belay test site
 * Description: What Belay's tests need of a WordPress they start: the Heartbeat about once a second on admin pages, no outgoing mail, and a log of the unsafe requests WordPress handled.
 *
 * Copied into wp-content/mu-plugins/ of a private copy of WordPress by tools/real-apps/wordpress.ts;
 * it reads BELAY_HEARTBEAT_MS and BELAY_REQUEST_LOG from that copy's wp-config.php.
 */

if (!defined('ABSPATH')) {
    exit;
}

// WordPress's own settings: its shortest interval (heartbeat.js raises anything below 15 s to
// 15 s) and no slowing down to 120 s when the page loses focus.
add_filter('heartbeat_settings', function ($settings) {
    $settings['interval'] = 15;
    $settings['suspension'] = 'disable';
    return $settings;
});

// Faster than the settings allow: heartbeat.js's own connectNow() every BELAY_HEARTBEAT_MS, which
// sends a beat at once unless one is still in flight.
add_action('admin_enqueue_scripts', function () {
    $ms = defined('BELAY_HEARTBEAT_MS') ? (int) BELAY_HEARTBEAT_MS : 0;
    if ($ms > 0) {
        wp_add_inline_script(
            'heartbeat',
            sprintf('window.setInterval(function () { if (window.wp && wp.heartbeat) { wp.heartbeat.connectNow(); } }, %d);', $ms)
        );
    }
});

// The site has no mail server: mail is refused instead of calling a missing sendmail.
add_filter('pre_wp_mail', '__return_false');

// One JSON line per unsafe request WordPress handled: its method, path, `action` field and the
// status it answered. No other field of a request is written (a sign-in's password is one).
if (defined('BELAY_REQUEST_LOG') && !in_array($_SERVER['REQUEST_METHOD'] ?? 'GET', ['GET', 'HEAD', 'OPTIONS'], true)) {
    register_shutdown_function(function () {
        $action = $_REQUEST['action'] ?? null;
        $line = json_encode([
            'method' => $_SERVER['REQUEST_METHOD'],
            'path' => strtok($_SERVER['REQUEST_URI'] ?? '/', '?'),
            'action' => is_string($action) ? substr($action, 0, 100) : null,
            'status' => http_response_code(),
            'at' => (int) round(microtime(true) * 1000),
        ]);
        file_put_contents(BELAY_REQUEST_LOG, $line . "\n", FILE_APPEND | LOCK_EX);
    });
}
