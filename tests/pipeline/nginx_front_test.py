#!/usr/bin/env python3
"""serve behind Debian's nginx with docs/deploy/nginx-zerohop.conf (issue 22, item 6): TLS in front,
WHEP proxied with the token, /stats guarded by --protect-stats, nginx's own limits answering floods and
smuggling attempts. Usage: nginx_front_test.py ZEROHOP_BINARY SOURCE_DIR. Exit 77 (skip) without nginx."""
import http.client
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

DEADLINE_S = 15


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what):
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"FAIL: {what} exited early ({proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"FAIL: {what} did not listen on {port} within {DEADLINE_S} s")


def main():
    zerohop, source = sys.argv[1], sys.argv[2]
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if not nginx or not shutil.which("openssl"):
        print("SKIP: nginx or openssl not installed (scripts/install-deps.sh)")
        return 77
    tmp = tempfile.mkdtemp(prefix="zh-nginx-")
    os.chmod(tmp, 0o755)
    procs = []
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    try:
        cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                       check=True, capture_output=True, timeout=60)
        token_file = os.path.join(tmp, "whep.token")
        with open(token_file, "w") as f:
            f.write("nginx-test-token\n")
        serve_port, tls_port = free_port(), free_port()
        serve = subprocess.Popen([zerohop, "serve", "--source", "test:320x240@15", "--listen",
                                  f"127.0.0.1:{serve_port}", "--whep-token-file", token_file, "--protect-stats",
                                  "--status-interval", "60"], stdout=subprocess.DEVNULL,
                                 stderr=open(os.path.join(tmp, "serve.log"), "w"))
        procs.append(serve)
        wait_port(serve_port, serve, "serve")

        # The documented file, with this test's ports and certificate.
        with open(os.path.join(source, "docs/deploy/nginx-zerohop.conf")) as f:
            conf = f.read()
        conf = conf.replace("listen 443 ssl;", f"listen 127.0.0.1:{tls_port} ssl;")
        conf = conf.replace("server 127.0.0.1:8080;", f"server 127.0.0.1:{serve_port};")
        conf = conf.replace("/etc/ssl/zerohop/fullchain.pem", cert).replace("/etc/ssl/zerohop/privkey.pem", key)
        assert f"127.0.0.1:{tls_port}" in conf and cert in conf, "the documented config changed shape"
        with open(os.path.join(tmp, "zerohop.conf"), "w") as f:
            f.write(conf)
        temps = " ".join(f"{k}_temp_path {tmp}/{k};" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        with open(os.path.join(tmp, "nginx.conf"), "w") as f:
            f.write(f"daemon off; worker_processes 1; pid {tmp}/nginx.pid; error_log {tmp}/error.log;\n"
                    f"{'user root;' if os.getuid() == 0 else ''}\n"
                    f"events {{ worker_connections 256; }}\n"
                    f"http {{ access_log off; {temps} include {tmp}/zerohop.conf; }}\n")
        ngx = subprocess.Popen([nginx, "-p", tmp, "-c", os.path.join(tmp, "nginx.conf")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append(ngx)
        wait_port(tls_port, ngx, "nginx")

        tls = ssl.create_default_context(cafile=cert)

        def request(method, path, body=None, headers=None):
            c = http.client.HTTPSConnection("127.0.0.1", tls_port, context=tls, timeout=10)
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            data = r.read()
            c.close()
            return r.status, dict(r.getheaders()), data

        auth = {"Authorization": "Bearer nginx-test-token"}
        status, _, body = request("GET", "/")
        check(status == 200 and b"<html" in body.lower(), f"GET / over TLS through nginx: {status}")
        status, _, _ = request("GET", "/stats")
        check(status == 401, f"/stats without the token (--protect-stats): {status}")
        status, _, body = request("GET", "/stats", headers=auth)
        check(status == 200 and b"viewers" in body, f"/stats with the token: {status}")
        with open(os.path.join(source, "tests/stream/data/chromium_offer.sdp"), "rb") as f:
            offer = f.read()
        status, headers, answer = request("POST", "/whep", offer, {**auth, "Content-Type": "application/sdp"})
        location = headers.get("Location", "")
        check(status == 201 and answer.startswith(b"v=0") and re.match(r"^/whep/[0-9a-f]{32}$", location),
              f"POST /whep through nginx: {status} Location {location!r}")
        if location:
            status, _, _ = request("DELETE", location, headers=auth)
            check(status == 200, f"DELETE {location}: {status}")

        # Framing nginx refuses itself (CL+TE), over TLS on one connection.
        raw = tls.wrap_socket(socket.create_connection(("127.0.0.1", tls_port), timeout=5), server_hostname="127.0.0.1")
        raw.sendall(b"POST /whep HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"0\r\n\r\nDELETE /whep/x HTTP/1.1\r\nHost: x\r\n\r\n")
        first = raw.recv(4096)
        raw.close()
        check(first.startswith(b"HTTP/1.1 400") or first.startswith(b"HTTP/1.1 411"),
              f"CL+TE through nginx: {first[:20]!r}")

        # A burst of offers from one client: nginx's limit_req answers 429 past its burst.
        statuses = [request("POST", "/whep", b"v=0\r\n", {**auth, "Content-Type": "application/sdp"})[0]
                    for _ in range(12)]
        check(429 in statuses and 400 in statuses, f"12 offers at once: {statuses}")
        status, _, _ = request("GET", "/stats", headers=auth)
        check(status == 200, f"/stats after the burst: {status}")

        serve.send_signal(signal.SIGTERM)
        code = serve.wait(timeout=10)
        check(code == 0, f"serve stopped cleanly: exit {code}")
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM if p is procs[0] else signal.SIGQUIT)
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for log in ("error.log", "serve.log"):
            if failures and os.path.exists(os.path.join(tmp, log)):
                print(f"--- {log}\n" + open(os.path.join(tmp, log)).read()[-2000:])
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS" if not failures else f"FAIL: {len(failures)} check(s)")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
