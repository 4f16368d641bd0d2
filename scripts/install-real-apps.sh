#!/usr/bin/env bash
# Installs what the real-application tests need from Debian when it is missing: WordPress
# (Debian's package; the tests run a private copy of its files), a MariaDB server (its binaries:
# each test starts its own on loopback), PHP's command-line interpreter (its built-in web server)
# and PHP's MySQL driver.
#
# No system service is left running or enabled. Debian's `wordpress` depends on a web server
# (`apache2 | httpd`: apt picks Apache) and on `libapache2-mod-php`; every alternative is a
# daemon. The MariaDB server comes as `mariadb-server-core` (mariadbd, mariadb-install-db), not
# `mariadb-server`, which adds the system service and its init scripts. Service starts are
# refused while packages install (a temporary /usr/sbin/policy-rc.d, unless the machine already
# has one), and Apache is then stopped if running and disabled.
set -euo pipefail

need=()
[ -f /usr/share/wordpress/wp-includes/version.php ] || need+=(wordpress)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server-core)
command -v mariadb-install-db >/dev/null 2>&1 || need+=(mariadb-server-core)
command -v php >/dev/null 2>&1 || need+=(php-cli)
if ! command -v php >/dev/null 2>&1 || ! php -r 'exit(extension_loaded("mysqli") ? 0 : 1);' 2>/dev/null; then
  need+=(php-mysql)
fi

if [ ${#need[@]} -eq 0 ]; then
  echo "real applications: present (wordpress, mariadbd, php, php-mysql)"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi

# Refuse every service start while the packages install (Debian's documented mechanism, read by
# invoke-rc.d); a policy the machine already has is left as it is.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  trap '$SUDO rm -f "$policy"' EXIT
fi

mapfile -t pkgs < <(printf '%s\n' "${need[@]}" | sort -u)
echo "real applications: installing ${pkgs[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null

# Apache came with WordPress: never running, never started at boot.
for service in apache2 apache-htcacheclean; do
  [ -e "/etc/init.d/$service" ] || [ -e "/lib/systemd/system/$service.service" ] || continue
  if [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true
  else
    $SUDO service "$service" stop >/dev/null 2>&1 || true
    $SUDO update-rc.d "$service" disable >/dev/null 2>&1 || true
  fi
done
echo "real applications: installed; apache2 (a dependency of wordpress) is stopped and disabled"
