#!/bin/sh
# Writes the credential files of the compose stack (#44: no ax container gets a credential in its
# environment) from the passwords of deploy/.env, one file per compose secret:
#
#   sudo deploy/write-credentials.sh            # reads deploy/.env, writes deploy/credentials/
#   sudo deploy/write-credentials.sh path/to/.env
#
# The folder is AX_CREDENTIALS_DIR (from the environment, else from the .env file, else
# deploy/credentials; relative to deploy/, as compose resolves it). Each file holds one value and
# a newline, mode 0440, owner root, group 10001 (the ax images' user), so the services read the
# ones mounted into them and nobody else on the host does. Run it again after changing a password
# in deploy/.env, then `docker compose up -d` (the services read their files at start).
# The .env file is read as KEY=value lines, never executed.
set -eu

deploy_dir=$(cd "$(dirname "$0")" && pwd)
env_file=${1:-$deploy_dir/.env}
[ -r "$env_file" ] || { echo "write-credentials: cannot read $env_file (copy deploy/.env.example to deploy/.env first)" >&2; exit 2; }

# value KEY: the last KEY=value of the .env file, one pair of surrounding quotes removed.
value() {
  v=$(sed -n "s/^[[:space:]]*$1=//p" "$env_file" | tail -n 1)
  v=${v%\"}; v=${v#\"}; v=${v%\'}; v=${v#\'}
  printf '%s' "$v"
}
need() {
  v=$(value "$1")
  [ -n "$v" ] || { echo "write-credentials: $1 is not set in $env_file" >&2; exit 2; }
  printf '%s' "$v"
}

mysql_password=$(need AX_MYSQL_PASSWORD)
redis_password=$(need AX_REDIS_PASSWORD)
rabbitmq_password=$(need AX_RABBITMQ_PASSWORD)
admin_token=$(need AX_ADMIN_TOKEN)
executor_secret=$(need AX_EXECUTOR_SECRET)

dir=${AX_CREDENTIALS_DIR:-$(value AX_CREDENTIALS_DIR)}
dir=${dir:-./credentials}
case $dir in /*) ;; *) dir=$deploy_dir/$dir ;; esac
mkdir -p "$dir"

umask 077
write() {
  printf '%s\n' "$2" > "$dir/$1.tmp"
  if [ "$(id -u)" = 0 ]; then chown 0:10001 "$dir/$1.tmp"; fi
  chmod 0440 "$dir/$1.tmp"
  mv -f "$dir/$1.tmp" "$dir/$1"
}
amqp() { printf 'amqp://ax:%s@%s:5672' "$rabbitmq_password" "$1"; }

write AX_MYSQL_URL "mysql://ax:$mysql_password@mysql:3306/ax"
write AX_REDIS_URL "redis://:$redis_password@redis:6379"
write AX_AMQP_URL "$(amqp rabbitmq)"
# docker-compose.rabbitmq-cluster.yml: the same login on the three nodes
write AX_AMQP_URL.cluster "$(amqp rabbitmq),$(amqp rabbitmq-2),$(amqp rabbitmq-3)"
write AX_AMQP_MANAGEMENT_URL "http://ax:$rabbitmq_password@rabbitmq:15672"
write AX_ADMIN_TOKEN "$admin_token"
write AX_EXECUTOR_SECRET "$executor_secret"

if [ "$(id -u)" != 0 ]; then
  echo "write-credentials: not root: the files are yours, not group 10001's; the containers (uid 10001) cannot read them until you run: sudo chown 0:10001 $dir/AX_*" >&2
fi
echo "write-credentials: wrote $dir"
