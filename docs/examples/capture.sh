#!/bin/sh
# Re-captures the outputs shown in docs/examples/*.md on this machine: each
# server on 127.0.0.1, clockprof attached for a fixed window, a bounded load
# run inside it. Needs root (BPF), a built ./clockprof and the packages of
# `make test-deps`. Usage: sh docs/examples/capture.sh OUTDIR [SERVER...]
set -eu
out=${1:?usage: capture.sh OUTDIR [redis nginx python node java go]}
shift
[ $# -gt 0 ] || set -- redis nginx python node java go
cp=$(pwd)/clockprof
mkdir -p "$out"
out=$(cd "$out" && pwd)

# profile NAME PID LOAD-COMMAND CLOCKPROF-OPTIONS...: a 6 s window, the load
# started once the probes are live, the summary kept in NAME.txt. The pages
# were captured with uprobes (their call sites and traps): asked by name, so
# that a capture taken again shows the same, whatever the default mechanism.
profile() {
	name=$1 pid=$2 load=$3
	shift 3
	"$cp" attach --mechanism uprobe -d 6 -e none "$@" -o "$out/$name.json" --html "$out/$name.html" "$pid" \
		> "$out/$name.txt" 2>&1 &
	cpid=$!
	sleep 1.5
	sh -c "$load" > "$out/$name.load.txt" 2>&1 < /dev/null
	wait $cpid
	kill "$pid" 2>/dev/null || true
	sleep 0.5
}

for s in "$@"; do
	case $s in
	redis)
		redis-server --port 16390 --bind 127.0.0.1 --save '' --appendonly no --loglevel warning \
			--dir "$out" > /dev/null 2>&1 &
		sleep 1
		profile redis $! "redis-benchmark -h 127.0.0.1 -p 16390 -t get -n 5000 -c 1 -q" \
			-r func:processCommand ;;
	nginx)
		mkdir -p "$out/nginx/www"
		echo '<p>hello</p>' > "$out/nginx/www/index.html"
		cat > "$out/nginx/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $out/nginx/nginx.pid; error_log stderr warn;
events { worker_connections 64; }
http { access_log off; server { listen 127.0.0.1:16391; root $out/nginx/www; } }
CONF
		/usr/sbin/nginx -e stderr -c "$out/nginx/nginx.conf" -p "$out/nginx" &
		master=$!
		sleep 1
		worker=$(cut -d' ' -f1 /proc/$master/task/$master/children)
		profile nginx "$worker" "ab -k -n 5000 -c 1 http://127.0.0.1:16391/index.html" \
			-r func:ngx_http_finalize_request
		kill "$master" ;;
	python)
		cat > "$out/server.py" <<'PY'
import http.server, time

class Handler(http.server.BaseHTTPRequestHandler):
    wbufsize = 65536  # one send per response
    def do_GET(self):
        started = time.monotonic()
        body = b"%.6f %.6f\n" % (time.time(), time.monotonic() - started)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", 16392), Handler).serve_forever()
PY
		/usr/bin/python3 "$out/server.py" &
		sleep 1
		profile python $! "ab -n 2000 -c 1 http://127.0.0.1:16392/" -r syscall:sendto ;;
	node)
		cat > "$out/server.js" <<'JS'
const http = require('http');
http.createServer((req, res) => {
  const t0 = process.hrtime.bigint();
  const body = `${Date.now()} ${String(process.hrtime.bigint() - t0).padStart(12)}\n`;
  res.writeHead(200, {'Content-Length': Buffer.byteLength(body)});
  res.end(body);
}).listen(16393, '127.0.0.1');
JS
		node "$out/server.js" &
		sleep 1
		profile node $! "ab -k -n 5000 -c 1 http://127.0.0.1:16393/" -r syscall:writev ;;
	java)
		sed -n '/^JAVA_SERVER = r"""/,/^"""/p' tests/integration/servers.py | sed '1d;$d' \
			| sed 's/\\\\n/\\n/' > "$out/Server.java"
		java "$out/Server.java" 16394 &
		jpid=$!
		i=0; until ab -n 1 http://127.0.0.1:16394/ > /dev/null 2>&1 || [ $i -gt 100 ]; do sleep 0.2; i=$((i+1)); done
		profile java $jpid "ab -n 2000 -c 1 http://127.0.0.1:16394/" -r syscall:write ;;
	go)
		build/tests/targets/go_http_server 16395 &
		sleep 1
		profile go $! "ab -n 5000 -c 1 http://127.0.0.1:16395/" --ops 5000 ;;
	esac
done
