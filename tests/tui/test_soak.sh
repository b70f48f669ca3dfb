#!/bin/bash
# The console with both ranks logging 2,000 lines/s each: RSS <= 64 MB and flat
# once its ring buffers are full. make test: 30 s; make soak: 10 minutes.
set -u
SOAK_S=${CONSOLE_SOAK_S:-30} exec bash "$(dirname "$0")/../bench/console.sh"
