#!/bin/sh
# Container entry point: apply the database migrations, then run the given command.
set -eu
sommelier db upgrade
exec "$@"
