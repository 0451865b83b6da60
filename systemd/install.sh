#!/usr/bin/env bash
# Install (or update, or remove) dicepad as a systemd service on Raspberry Pi OS bookworm/trixie.
#
#   sudo systemd/install.sh              install, or update after `git pull` (keeps all data)
#   systemd/install.sh --dry-run         print every command it would run, change nothing
#   sudo systemd/install.sh --uninstall  remove the service and /opt/dicepad, keep the data
#   sudo systemd/install.sh --uninstall --purge   ... and the data, settings and user
#   systemd/install.sh --print-constraints        the NumPy/OpenCV pins for this OS, and why
#   sudo systemd/install.sh --house      the house machine (any Debian bookworm/trixie, or a Pi):
#                                        PostgreSQL, role and database dicepad_house, the
#                                        dicepad-house service; prints the URL the tables need
#
# Layout: /opt/dicepad/venv (the program, built from the copy in /opt/dicepad/src),
# /etc/dicepad/dicepad.env (settings), /etc/dicepad/house.env (--house: the database URL, 0600),
# /var/lib/dicepad (database, PIN hash, snapshots; created by systemd), user `dicepad`.
# For tests, the facts it reads can be redirected: DICEPAD_OS_RELEASE (os-release file),
# DICEPAD_PI_MODEL (device-tree model file), DICEPAD_SYSTEM_PYTHON (the system python3), and
# with --dry-run only, DICEPAD_ROOT (a directory standing in for / to find an earlier install).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
checkout="$(dirname "$here")"
root="${DICEPAD_ROOT:-}"
prefix="$root/opt/dicepad"
venv="$prefix/venv"
constraints="$prefix/constraints.txt"
source_copy="$prefix/src"
unit_src="$here/dicepad.service"
unit_dst="$root/etc/systemd/system/dicepad.service"
conf_dir="$root/etc/dicepad"
env_file="$conf_dir/dicepad.env"
data_dir="$root/var/lib/dicepad"
os_release="${DICEPAD_OS_RELEASE:-/etc/os-release}"
system_python="${DICEPAD_SYSTEM_PYTHON:-/usr/bin/python3}"
pi_install="$checkout/server/pi_install.py"
apt_packages=(python3-venv python3-numpy python3-picamera2 python3-lgpio sqlite3)
house_unit_src="$here/dicepad-house.service"
house_unit_dst="$root/etc/systemd/system/dicepad-house.service"
house_env="$conf_dir/house.env"
house_db=dicepad_house
house_role=dicepad
house_apt_packages=(python3-venv python3-numpy postgresql)
pg_etc="$root/etc/postgresql"
# what pip installs and what must import afterwards (a house-only machine has no camera)
extras="[pi]"
check_modules=(cv2 onnxruntime picamera2 gpiozero server.cli)

action=install
dry_run=0
force=0
purge=0
house=0

usage() { sed -n '2,/^set -euo/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
say() { printf '==> %s\n' "$*"; }
warn() { printf 'install.sh: warning: %s\n' "$*" >&2; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

copy_source() {  # the checkout without VCS, venvs, caches and build leftovers, into $source_copy
  local excludes=(--exclude=./.git --exclude=./.venv --exclude=./.venv-bookworm --exclude=./.trixie
    --exclude=./.trixie.log --exclude=./build --exclude=./dist
    --exclude=./artifacts --exclude='*.egg-info' --exclude=__pycache__ --exclude=./.mypy_cache
    --exclude=./.pytest_cache --exclude=./.ruff_cache --exclude=./.hypothesis)
  run rm -rf "$source_copy"
  run install -d -m 0755 "$source_copy"
  if [ "$dry_run" = 1 ]; then
    printf '+ tar -C %q' "$checkout"; printf ' %q' "${excludes[@]}"
    printf ' -cf - . | tar -C %q --no-same-owner -xf -\n' "$source_copy"
  else
    tar -C "$checkout" "${excludes[@]}" -cf - . | tar -C "$source_copy" --no-same-owner -xf -
  fi
}

run() {  # run a command, or in a dry run print it (shell-quoted, so it can be pasted)
  if [ "$dry_run" = 1 ]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

write_file() {  # write_file MODE DEST CONTENT
  if [ "$dry_run" = 1 ]; then
    printf '+ write %s (mode %s):\n' "$2" "$1"
    printf '%s\n' "$3" | sed 's/^/    /'
  else
    local tmp
    tmp="$(mktemp "$2.XXXXXX")"
    printf '%s\n' "$3" >"$tmp"
    chmod "$1" "$tmp"
    mv -f "$tmp" "$2"
  fi
}

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=1 ;;
    --force) force=1 ;;
    --uninstall) action=uninstall ;;
    --purge) purge=1 ;;
    --print-constraints) action=constraints ;;
    --house) house=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
  shift
done
[ "$purge" = 0 ] || [ "$action" = uninstall ] || die "--purge only goes with --uninstall"
if [ "$house" = 1 ]; then
  [ "$action" = install ] || die "--house only installs: to remove it, sudo systemctl disable --now \
dicepad-house and rm $house_unit_dst (the database stays: sudo -u postgres dropdb $house_db)"
  action=house
fi
[ -z "$root" ] || [ "$dry_run" = 1 ] || die "DICEPAD_ROOT is only for dry runs (tests)"

# --- facts -----------------------------------------------------------------------------------

pi_model() {  # the board's model string, or nothing when this is not a Raspberry Pi
  local files=("${DICEPAD_PI_MODEL:-/proc/device-tree/model}")
  [ -n "${DICEPAD_PI_MODEL:-}" ] || files+=(/sys/firmware/devicetree/base/model)
  local f model
  for f in "${files[@]}"; do
    if [ -r "$f" ]; then
      model="$(tr -d '\0' <"$f")"
      case "$model" in "Raspberry Pi"*) printf '%s' "$model"; return 0 ;; esac
    fi
  done
  return 0
}

os_codename() {
  [ -r "$os_release" ] || return 0
  # shellcheck disable=SC1090  # the file is os-release(5): plain KEY=value lines
  (. "$os_release" && printf '%s' "${VERSION_CODENAME:-}")
}

system_numpy() {  # Debian's NumPy version, or nothing when python3-numpy is not installed
  "$system_python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true
}

python_minor() {
  "$system_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true
}

constraints_for() {  # constraints_for CODENAME NUMPY_OR_EMPTY
  local args=(constraints --codename "$1")
  [ -z "$2" ] || args+=(--numpy "$2")
  "$system_python" "$pi_install" "${args[@]}"
}

check_platform() {
  model="$(pi_model)"
  codename="$(os_codename)"
  if [ -n "$model" ]; then
    say "board: $model"
  elif [ "$force" = 1 ]; then
    warn "this is not a Raspberry Pi (no 'Raspberry Pi' model in the device tree); going on because of --force"
  else
    die "this is not a Raspberry Pi: no 'Raspberry Pi' model in /proc/device-tree/model.
The installer sets up the Pi camera (picamera2) and GPIO buttons; elsewhere run ./run serve.
Use --force to install anyway (e.g. an unusual board), or --dry-run --force to see the plan."
  fi
  case "$codename" in
    bookworm | trixie) say "OS: Raspberry Pi OS / Debian $codename" ;;
    *)
      [ "$force" = 1 ] || die "unsupported OS release '${codename:-unknown}' (from $os_release): \
bookworm or trixie is needed. Use --force to try anyway."
      warn "untested OS release '${codename:-unknown}'; going on because of --force"
      ;;
  esac
  local arch
  arch="$(uname -m)"
  say "architecture: $arch"
  case "$arch" in
    armv6l | armv7l) warn "64-bit Raspberry Pi OS is recommended: for 32-bit ARM, OpenCV comes \
from piwheels.org only for some releases, and may have to be built (hours)" ;;
  esac
}

# --- actions ---------------------------------------------------------------------------------

print_constraints() {
  codename="$(os_codename)"
  constraints_for "${codename:-unknown}" "$(system_numpy)"
}

install_apt() {
  say "apt packages (picamera2/libcamera, NumPy and GPIO come from Raspberry Pi OS, not pip)"
  run apt-get update
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${apt_packages[@]}"
}

ensure_user() {
  say "system user dicepad (groups video, gpio)"
  if getent passwd dicepad >/dev/null; then
    echo "    user dicepad exists"
  else
    run useradd --system --user-group --home-dir "$data_dir" --no-create-home \
      --shell /usr/sbin/nologin --comment "dicepad scoreboard" dicepad
  fi
  local group
  for group in video gpio; do
    if ! getent group "$group" >/dev/null; then
      run groupadd --system "$group"  # the unit's SupplementaryGroups= needs it to exist
    fi
  done
  run usermod --append --groups video,gpio dicepad
}

venv_is_current() {  # the venv exists, sees the system site-packages, and uses this python
  local cfg="$venv/pyvenv.cfg" want
  want="$(python_minor)"
  [ -x "$venv/bin/python" ] && [ -r "$cfg" ] || return 1
  grep -Eq '^include-system-site-packages *= *true' "$cfg" || return 1
  [ -n "$want" ] && grep -Eq "^version *= *${want//./\\.}(\.|$)" "$cfg"
}

ensure_venv() {
  say "venv $venv (with --system-site-packages, so apt's picamera2 and libcamera are visible)"
  run install -d -m 0755 "$prefix"
  if venv_is_current; then
    echo "    venv is current"
  else
    [ ! -e "$venv" ] || run rm -rf "$venv"  # an OS upgrade changed python: rebuild it
    run "$system_python" -m venv --system-site-packages "$venv"
  fi
}

install_project() {
  local numpy text
  numpy="$(system_numpy)"
  if [ -z "$numpy" ] && [ "$dry_run" = 0 ]; then
    die "python3-numpy is not importable by $system_python after apt; cannot choose OpenCV"
  fi
  say "NumPy/OpenCV choice"
  text="$(constraints_for "${codename:-unknown}" "$numpy")" || die "could not work out the NumPy pins"
  numpy="$(printf '%s\n' "$text" | sed -n 's/^numpy==//p')"
  printf '%s\n' "$text" | sed -n 's/^# /    /p' | sed 1d
  write_file 0644 "$constraints" "$text"
  # Repair an earlier install that let pip put its own NumPy into the venv (the trap).
  if compgen -G "$venv/lib/python3*/site-packages/numpy" >/dev/null; then
    run "$venv/bin/python" -m pip uninstall -y numpy
  fi
  # pip builds from a fresh copy: a stale build/ in the checkout would be packaged (deleted
  # modules coming back), and root must not leave files in the user's checkout.
  say "dicepad from $checkout (copied to $source_copy) into the venv"
  copy_source
  run env PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install --upgrade \
    --constraint "$constraints" "${source_copy}${extras}"
  say "check: NumPy must be Debian's, and ${check_modules[*]} must import"
  run "$venv/bin/python" "$pi_install" check --numpy "$numpy" "${check_modules[@]}"
}

install_service() {
  say "settings $env_file (kept if it exists) and the unit $unit_dst"
  run install -d -m 0755 "$conf_dir"
  if [ -e "$env_file" ]; then
    echo "    $env_file exists: kept"
  else
    run install -m 0600 "$here/dicepad.env" "$env_file"
  fi
  run install -m 0644 "$unit_src" "$unit_dst"
  run systemctl daemon-reload
  run systemctl enable dicepad.service
  say "(re)starting dicepad: systemctl waits until the scoreboard is listening"
  if ! run systemctl restart dicepad.service; then
    journalctl -u dicepad.service -n 40 --no-pager >&2 || true
    die "dicepad did not start; the log is above (sudo journalctl -u dicepad)"
  fi
}

setting() {  # setting NAME DEFAULT: the value in the env file, else the unit's default
  local value=""
  [ ! -r "$env_file" ] || value="$(sed -n "s/^[[:space:]]*$1=//p" "$env_file" | tail -n 1)"
  printf '%s' "${value:-$2}"
}

print_next_steps() {
  local port host ips
  port="$(setting DICEPAD_PORT 8080)"
  host="$(hostname 2>/dev/null || echo raspberrypi)"
  ips="$(hostname -I 2>/dev/null || true)"
  echo
  say "dicepad is running. On a phone on the same Wi-Fi open:"
  echo "    http://$host.local:$port/"
  local ip
  for ip in $ips; do
    case "$ip" in *:*) ;; *) echo "    http://$ip:$port/" ;; esac
  done
  echo "  The page shows a QR code other players can scan."
  local pin_line
  pin_line="$(journalctl -u dicepad.service --no-pager -o cat 2>/dev/null \
    | grep -i 'table PIN is' | tail -n 1 || true)"
  if [ -n "$(setting DICEPAD_PIN '')" ]; then
    echo "  The PIN is the DICEPAD_PIN set in $env_file."
  elif [ -n "$pin_line" ]; then
    echo "  From the log of the first start: $pin_line"
  else
    echo "  The PIN is printed once, on the first start:  sudo journalctl -u dicepad | grep -i pin"
  fi
  echo "  Status and log:  systemctl status dicepad;  sudo journalctl -u dicepad -f"
  echo "  Settings:        sudo nano $env_file, then sudo systemctl restart dicepad"
  echo "  Update:          git pull && sudo systemd/install.sh   (keeps $data_dir)"
}

do_install() {
  check_platform
  [ "$dry_run" = 1 ] || [ "$(id -u)" = 0 ] || die "run as root: sudo $0 (or --dry-run to see the plan)"
  [ "$dry_run" = 0 ] || say "dry run: nothing is changed; these are the commands it would run"
  install_apt
  ensure_user
  ensure_venv
  install_project
  install_service
  if [ "$dry_run" = 1 ]; then
    say "then it prints the scoreboard's URL (http://$(hostname 2>/dev/null || echo raspberrypi).local:$(setting DICEPAD_PORT 8080)/) and how to find the PIN"
  else
    print_next_steps
  fi
}

do_uninstall() {
  [ "$dry_run" = 1 ] || [ "$(id -u)" = 0 ] || die "run as root: sudo $0 --uninstall"
  say "removing the dicepad service and $prefix"
  if [ -e "$unit_dst" ]; then
    run systemctl disable --now dicepad.service
    run rm -f "$unit_dst"
    run systemctl daemon-reload
  fi
  run rm -rf "$prefix"
  if [ "$purge" = 1 ]; then
    say "--purge: removing the data, settings and the user"
    run rm -rf "$data_dir" "$conf_dir"
    if getent passwd dicepad >/dev/null; then run userdel dicepad; fi
  else
    say "kept the database in $data_dir and settings in $conf_dir (--uninstall --purge removes them)"
  fi
}

# --- the house (--house) ------------------------------------------------------------------------

pg_query() {  # pg_query SQL: one value from PostgreSQL as its superuser (read-only; dry runs too)
  runuser -u postgres -- psql -X -q -A -t -v ON_ERROR_STOP=1 -d postgres -c "$1" 2>/dev/null || true
}

pg_admin() {  # pg_admin SQL [SHOWN]: run SQL as postgres, on stdin (a password never in ps)
  if [ "$dry_run" = 1 ]; then
    printf '+ psql as postgres: %s\n' "${2:-$1}"
  else
    printf '%s\n' "$1" | runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -d postgres
  fi
}

new_password() {  # 32 random hex digits: nothing a URL must escape
  head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'
}

house_setting() {  # the house database URL kept in $house_env, or nothing
  [ -r "$house_env" ] || return 0
  sed -n 's/^DICEPAD_HOUSE_DB=//p' "$house_env" | tail -n 1
}

pg_conf_dir() {  # /etc/postgresql/VERSION/main of the newest cluster (Debian's layout)
  local found
  found="$(find "$pg_etc" -mindepth 2 -maxdepth 2 -type d -name main 2>/dev/null | sort -V | tail -n 1)"
  printf '%s' "${found:-$pg_etc/VERSION/main}"
}

check_house_platform() {
  codename="$(os_codename)"
  case "$codename" in
    bookworm | trixie) say "OS: Debian $codename (the house needs no camera: any machine will do)" ;;
    *)
      [ "$force" = 1 ] || die "unsupported OS release '${codename:-unknown}' (from $os_release): \
bookworm or trixie is needed. Use --force to try anyway."
      warn "untested OS release '${codename:-unknown}'; going on because of --force"
      ;;
  esac
  if [ -z "$(pi_model)" ]; then
    extras=""
    check_modules=(psycopg server.house.app)
  else
    check_modules=(psycopg server.house.app server.cli)
  fi
}

setup_postgres() {
  local conf password url
  say "PostgreSQL: listening on the bar's network for the tables, role $house_role, database $house_db"
  run systemctl enable --now postgresql.service
  conf="$(pg_conf_dir)"
  # Debian's postgresql.conf reads conf.d/; the tables on other machines need more than localhost
  write_file 0644 "$conf/conf.d/dicepad.conf" "# dicepad: the table servers ship from the bar's network
listen_addresses = '*'"
  if ! grep -qs "^host $house_db $house_role samenet" "$conf/pg_hba.conf"; then
    if [ "$dry_run" = 1 ]; then
      printf '+ append to %s: host %s %s samenet scram-sha-256\n' "$conf/pg_hba.conf" "$house_db" "$house_role"
    else
      printf 'host %s %s samenet scram-sha-256\n' "$house_db" "$house_role" >>"$conf/pg_hba.conf"
    fi
  fi
  run systemctl restart postgresql.service
  url="$(house_setting)"
  if [ "$(pg_query "SELECT 1 FROM pg_roles WHERE rolname = '$house_role'")" = 1 ] && [ -n "$url" ]; then
    echo "    role $house_role exists and $house_env has its URL: kept"
  else
    # a dry run sets nothing: a placeholder in what it prints
    if [ "$dry_run" = 1 ]; then password=NEW-PASSWORD; else password=$(new_password); fi
    if [ "$(pg_query "SELECT 1 FROM pg_roles WHERE rolname = '$house_role'")" = 1 ]; then
      warn "role $house_role exists but $house_env is missing: it gets a new password (point the tables at the new URL)"
      pg_admin "ALTER ROLE $house_role LOGIN PASSWORD '$password'" "ALTER ROLE $house_role LOGIN PASSWORD '********'"
    else
      pg_admin "CREATE ROLE $house_role LOGIN PASSWORD '$password'" "CREATE ROLE $house_role LOGIN PASSWORD '********'"
    fi
    url="postgresql://$house_role:$password@localhost:5432/$house_db"
    run install -d -m 0755 "$conf_dir"
    write_file 0600 "$house_env" "# dicepad house: the database (made by systemd/install.sh --house; keep it secret)
DICEPAD_HOUSE_DB=$url"
  fi
  if [ "$(pg_query "SELECT 1 FROM pg_database WHERE datname = '$house_db'")" = 1 ]; then
    echo "    database $house_db exists: kept"
  else
    pg_admin "CREATE DATABASE $house_db OWNER $house_role"
  fi
  house_url="$url"
}

install_house_service() {
  say "the unit $house_unit_dst"
  run install -m 0644 "$house_unit_src" "$house_unit_dst"
  run systemctl daemon-reload
  run systemctl enable dicepad-house.service
  if ! run systemctl restart dicepad-house.service; then
    journalctl -u dicepad-house.service -n 40 --no-pager >&2 || true
    die "dicepad-house did not start; the log is above (sudo journalctl -u dicepad-house)"
  fi
}

print_house_steps() {
  local host tables_url ip ips
  host="$(hostname 2>/dev/null || echo house)"
  ips="$(hostname -I 2>/dev/null || true)"
  tables_url="${house_url/@localhost:/@$host.local:}"
  echo
  say "the house runs. Its pages, for phones and a TV (add ?kiosk=1):"
  echo "    http://$host.local:8090/"
  for ip in $ips; do
    case "$ip" in *:*) ;; *) echo "    http://$ip:8090/" ;; esac
  done
  echo "  The URL the tables need (keep it secret: it holds the password):"
  echo "    $tables_url"
  echo "  On each table Pi, add to /etc/dicepad/dicepad.env, then sudo systemctl restart dicepad:"
  echo "    DICEPAD_HOUSE=$tables_url"
  echo "    DICEPAD_HOUSE_NAME=<a name for that table, e.g. its host name>"
  echo "  or run it by hand:  dicepad serve --house '$tables_url' --house-name NAME"
  echo "  The house PIN is printed once, on the first start:  sudo journalctl -u dicepad-house | grep -i pin"
}

do_house() {
  check_house_platform
  [ "$dry_run" = 1 ] || [ "$(id -u)" = 0 ] || die "run as root: sudo $0 --house (or --dry-run to see the plan)"
  [ "$dry_run" = 0 ] || say "dry run: nothing is changed; these are the commands it would run"
  say "apt packages (PostgreSQL, Python's venv and NumPy from Debian)"
  run apt-get update
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${house_apt_packages[@]}"
  if getent passwd dicepad >/dev/null; then
    echo "    user dicepad exists"
  else
    run useradd --system --user-group --home-dir "$data_dir" --no-create-home \
      --shell /usr/sbin/nologin --comment "dicepad scoreboard" dicepad
  fi
  ensure_venv
  install_project
  setup_postgres
  install_house_service
  print_house_steps
}

case "$action" in
  install) do_install ;;
  house) do_house ;;
  uninstall) do_uninstall ;;
  constraints) print_constraints ;;
esac
