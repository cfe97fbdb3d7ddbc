#!/usr/bin/env bash
# Three instances of the sample share one standalone GCS emulator. Watch exactly one run each job while
# the others skip it, kill -9 the holder of the long job, and see another instance take over after the TTL.
#   sample-app/run-cluster.sh            (from the repository root or from sample-app/)
# Needs: a JDK 17+, curl. Builds the sample jar first if it is missing. On exit it stops the instances
# first (SIGTERM, so they release their locks), waits for them, and only then stops the emulator.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=sample-app/target/sample-app.jar
EMU_PORT=${EMU_PORT:-4443}
PORTS=(8081 8082 8083)
TTL=${TTL:-10s}
LOGDIR=$(mktemp -d)
EMULATOR_PID=""
declare -A PID=()

# Background JVMs are disowned so that bash prints no "Killed" job notices; we wait for them by polling.
stop_and_wait() { # pid...
  local p
  for p in "$@"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "$@"; do
    for _ in $(seq 1 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$p" 2>/dev/null && { echo "  pid $p did not stop within 30 s; killing it"; kill -KILL "$p" 2>/dev/null || true; }
  done
  return 0
}
cleanup() {
  trap - EXIT INT TERM
  echo "stopping the instances (they release their locks), then the emulator ..."
  stop_and_wait "${PID[@]}"
  [[ -n $EMULATOR_PID ]] && stop_and_wait "$EMULATOR_PID"
  echo "stopped; logs: $LOGDIR"
}
trap cleanup EXIT INT TERM

if [[ ! -f $JAR ]]; then
  echo "building $JAR ..."
  ./mvnw -q -B -pl sample-app -am package -DskipTests
fi

echo "starting the GCS emulator on port $EMU_PORT (logs in $LOGDIR)"
java -jar "$JAR" emulator --port "$EMU_PORT" --bucket gcslock >"$LOGDIR/emulator.log" 2>&1 &
EMULATOR_PID=$!; disown "$EMULATOR_PID"
for _ in $(seq 1 100); do grep -q "listening" "$LOGDIR/emulator.log" 2>/dev/null && break; sleep 0.2; done

for port in "${PORTS[@]}"; do
  java -jar "$JAR" --server.port="$port" --spring.application.name="instance-$port" \
    --gcslock.emulator.embedded=false --gcslock.emulator.endpoint="http://127.0.0.1:$EMU_PORT" \
    --gcslock.bucket=gcslock --gcslock.ttl="$TTL" --gcslock.refresh-interval=2s \
    --sample.report.interval=3s >"$LOGDIR/instance-$port.log" 2>&1 &
  PID[$port]=$!; disown "${PID[$port]}"
done

holds() { curl -fs "http://127.0.0.1:$1/actuator/health" 2>/dev/null | grep -q '"name":"long-migration"'; }
up() { curl -fs "http://127.0.0.1:$1/actuator/health" >/dev/null 2>&1; }
skips() { # the gcslock.acquire timer's count with outcome=skipped, 0 if none yet
  local n
  n=$(curl -fs "http://127.0.0.1:$1/actuator/metrics/gcslock.acquire?tag=outcome:skipped" 2>/dev/null \
    | grep -o '"statistic":"COUNT","value":[0-9.]*' | grep -o '[0-9.]*$' | cut -d. -f1 || true)
  echo "${n:-0}"
}

echo "waiting for the instances to start ..."
for port in "${PORTS[@]}"; do for _ in $(seq 1 240); do up "$port" && break; sleep 0.5; done; done

holder=""
for _ in $(seq 1 60); do
  for port in "${PORTS[@]}"; do holds "$port" && holder=$port; done
  [[ -n $holder ]] && break; sleep 0.5
done
[[ -z $holder ]] && { echo "no instance holds long-migration; see $LOGDIR"; exit 1; }
echo "instance-$holder holds long-migration; the others skip it:"
for port in "${PORTS[@]}"; do printf '  instance-%s holds it: %s\n' "$port" "$(holds "$port" && echo yes || echo no)"; done

sleep 7
echo "report runs so far (each run by exactly one instance):"
grep -h "runs the report" "$LOGDIR"/instance-*.log | sed 's/.*: /  /' | tail -6
echo "skips (each instance logs its first skip of a job once at INFO; gcslock.acquire{outcome=skipped} counts all):"
for port in "${PORTS[@]}"; do
  printf '  instance-%s: %s skipped attempt(s)\n' "$port" "$(skips "$port")"
done
for port in "${PORTS[@]}"; do
  grep -h -m1 "so this run is skipped" "$LOGDIR/instance-$port.log" | sed "s/.*GcsLockedInterceptor *: /  instance-$port: /" || true
done

echo "kill -9 instance-$holder (pid ${PID[$holder]}) at $(date +%T); TTL is $TTL"
kill -KILL "${PID[$holder]}"
unset "PID[$holder]"
start=$(date +%s.%N)
new=""
for _ in $(seq 1 240); do
  for port in "${!PID[@]}"; do holds "$port" && new=$port; done
  [[ -n $new ]] && break; sleep 0.25
done
end=$(date +%s.%N)
if [[ -z $new ]]; then echo "nobody took over within 60 s; see $LOGDIR"; exit 1; fi
printf 'instance-%s took long-migration over %.1f s after the kill (TTL %s)\n' "$new" "$(echo "$end - $start" | bc)" "$TTL"
grep -h "took over" "$LOGDIR/instance-$new.log" | sed 's/.*: /  /' | tail -1 || true
