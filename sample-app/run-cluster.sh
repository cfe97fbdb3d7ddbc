#!/usr/bin/env bash
# Three instances of the sample share one standalone GCS emulator. Watch exactly one run each job,
# kill -9 the holder of the long job, and see another instance take over after the TTL.
#   sample-app/run-cluster.sh            (from the repository root or from sample-app/)
# Needs: a JDK 17+, curl. Builds the sample jar first if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=sample-app/target/sample-app.jar
EMU_PORT=${EMU_PORT:-4443}
PORTS=(8081 8082 8083)
TTL=${TTL:-10s}
LOGDIR=$(mktemp -d)
PIDS=()

cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

if [[ ! -f $JAR ]]; then
  echo "building $JAR ..."
  ./mvnw -q -B -pl sample-app -am package -DskipTests
fi

echo "starting the GCS emulator on port $EMU_PORT (logs in $LOGDIR)"
java -jar "$JAR" emulator --port "$EMU_PORT" --bucket gcslock >"$LOGDIR/emulator.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do grep -q "listening" "$LOGDIR/emulator.log" 2>/dev/null && break; sleep 0.2; done

for port in "${PORTS[@]}"; do
  java -jar "$JAR" --server.port="$port" --spring.application.name="instance-$port" \
    --gcslock.emulator.embedded=false --gcslock.emulator.endpoint="http://127.0.0.1:$EMU_PORT" \
    --gcslock.bucket=gcslock --gcslock.ttl="$TTL" --gcslock.refresh-interval=2s \
    --sample.report.interval=3s >"$LOGDIR/instance-$port.log" 2>&1 &
  PIDS+=($!)
  eval "PID_$port=$!"
done

holds() { curl -fs "http://127.0.0.1:$1/actuator/health" 2>/dev/null | grep -q '"name":"long-migration"'; }
up() { curl -fs "http://127.0.0.1:$1/actuator/health" >/dev/null 2>&1; }

echo "waiting for the instances to start ..."
for port in "${PORTS[@]}"; do for _ in $(seq 1 120); do up "$port" && break; sleep 0.5; done; done

holder=""
for _ in $(seq 1 40); do
  for port in "${PORTS[@]}"; do holds "$port" && holder=$port; done
  [[ -n $holder ]] && break; sleep 0.5
done
[[ -z $holder ]] && { echo "no instance holds long-migration; see $LOGDIR"; exit 1; }
echo "instance-$holder holds long-migration; the others skip it:"
for port in "${PORTS[@]}"; do printf '  instance-%s holds it: %s\n' "$port" "$(holds "$port" && echo yes || echo no)"; done

sleep 7
echo "report runs so far (each run by exactly one instance):"
grep -h "runs the report" "$LOGDIR"/instance-*.log | sed 's/.*: /  /' | tail -6

pid_var="PID_$holder"
echo "kill -9 instance-$holder (pid ${!pid_var}) at $(date +%T); TTL is $TTL"
kill -9 "${!pid_var}"
start=$(date +%s.%N)
new=""
for _ in $(seq 1 120); do
  for port in "${PORTS[@]}"; do [[ $port != "$holder" ]] && holds "$port" && new=$port; done
  [[ -n $new ]] && break; sleep 0.25
done
end=$(date +%s.%N)
if [[ -z $new ]]; then echo "nobody took over within 30 s; see $LOGDIR"; exit 1; fi
printf 'instance-%s took long-migration over %.1f s after the kill (TTL %s)\n' "$new" "$(echo "$end - $start" | bc)" "$TTL"
grep -h "took over" "$LOGDIR/instance-$new.log" | sed 's/.*: /  /' | tail -1 || true
echo "logs: $LOGDIR"
