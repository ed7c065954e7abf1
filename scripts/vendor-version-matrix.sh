#!/usr/bin/env bash
# Which LangGraph.js lines the vendor's dev server loads: runs `langgraphjs dev` of
# @langchain/langgraph-cli (maintained line 1.5.x) on each project of the version
# matrix (installed by test/agentserver/version-matrix.test.ts into the cache) and
# asks it for each graph's assistant. Outside CI: it installs the vendor's CLI.
#   bash scripts/vendor-version-matrix.sh [cli-version]
set -euo pipefail
cli_version=${1:-1.5.1}
cache=${SLIPWAY_VERSION_MATRIX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/slipway-version-matrix}
cli_dir="$cache/vendor-cli-$cli_version"
if [ ! -x "$cli_dir/node_modules/.bin/langgraphjs" ]; then
  mkdir -p "$cli_dir"
  (cd "$cli_dir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "@langchain/langgraph-cli@$cli_version")
fi
port=$((40000 + RANDOM % 20000))
for project in "$cache"/langgraph-*-core-*; do
  [ -d "$project/node_modules" ] || continue
  version=$(node -p "require('$project/node_modules/@langchain/langgraph/package.json').version")
  log=$(mktemp)
  (cd "$project" && exec "$cli_dir/node_modules/.bin/langgraphjs" dev --port "$port" --no-browser --config langgraph.json) >"$log" 2>&1 &
  pid=$!
  verdict="did not start"
  for _ in $(seq 1 90); do
    if curl -sf -X POST "http://127.0.0.1:$port/assistants/search" -H 'content-type: application/json' -d '{"graph_id":"chat"}' | grep -q assistant_id; then
      verdict="loads"; break
    fi
    kill -0 "$pid" 2>/dev/null || { verdict="refused: $(grep -m1 -iE 'error|requires|version' "$log" | cut -c1-160)"; break; }
    sleep 2
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "| $version | $verdict |"
  rm -f "$log"
done
