#!/usr/bin/env python3
"""A loopback stand-in for the Hugging Face Hub and its CDN, for Ember's downloader tests.

Usage: hub_server.py DIR
DIR/config.json (re-read whenever it changes) describes the repos and the misbehaviours:
  {"token": "secret", "page_size": 3,
   "repos": {"owner/name": {"sha": "<40 hex>", "gated": false, "renamed_to": "owner/new",
                            "extra_tree": [<tree entries served as they are>]}},
   "faults": [{"kind": "drop" | "stall" | "norange" | "wrong" | "status" | "expire" | "throttle",
               "path": "<hub path, optional>", "count": 1 (-1: always), "at": 0.5, "seconds": 5,
               "code": 503, "bytes_per_second": 1000000}]}
A repo's files are DIR/files/owner/name/...; *.gguf and *.pt are served as LFS files (a 302 from
/resolve/ to the "CDN" port), the rest straight from /resolve/. Prints "PORTS <api> <cdn>" once
both listen on 127.0.0.1, and keeps counters in DIR/stats.json.
"""

import hashlib
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = sys.argv[1]
LFS_SUFFIXES = (".gguf", ".pt")
CHUNK = 1 << 20

lock = threading.Lock()
stats_lock = threading.Lock()
state = {"config_key": None, "config": {}, "fired": {}, "serials_used": set(), "serial": 0, "hashes": {}}
stats = {"requests": 0, "range_requests": 0, "cdn_gets": 0, "cdn_auth": 0, "resolves": 0,
         "proxied": 0, "bytes_sent": 0, "last_search": ""}
ports = {}


def config():
    path = os.path.join(ROOT, "config.json")
    try:
        st = os.stat(path)
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
    except FileNotFoundError:
        key = None
    with lock:
        if key != state["config_key"]:
            state["config_key"] = key
            state["config"] = json.load(open(path)) if key else {}
            state["fired"] = {}
            state["serials_used"] = set()
        return state["config"]


def take_fault(kind, hub_path):
    """The first matching fault with shots left, or None; each call spends one shot."""
    faults = config().get("faults", [])
    with lock:
        for i, f in enumerate(faults):
            if f["kind"] != kind or f.get("path", hub_path) != hub_path:
                continue
            count = f.get("count", 1)
            fired = state["fired"].get(i, 0)
            if count >= 0 and fired >= count:
                continue
            state["fired"][i] = fired + 1
            return f
    return None


def count(name, n=1):
    with lock:
        stats[name] += n


def save_stats():
    # One writer at a time, snapshot taken inside: the file on disk is never older than the last request.
    with stats_lock:
        with lock:
            data = json.dumps(stats)
        tmp = os.path.join(ROOT, "stats.json.tmp")
        with open(tmp, "w") as out:
            out.write(data)
        os.replace(tmp, os.path.join(ROOT, "stats.json"))


def file_hashes(path):
    st = os.stat(path)
    key = (path, st.st_ino, st.st_mtime_ns, st.st_size)
    with lock:
        if key in state["hashes"]:
            return state["hashes"][key]
    sha1 = hashlib.sha1(b"blob %d\0" % st.st_size)
    sha256 = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            block = f.read(CHUNK)
            if not block:
                break
            sha1.update(block)
            sha256.update(block)
    result = (sha1.hexdigest(), sha256.hexdigest())
    with lock:
        state["hashes"][key] = result
    return result


def repo_dir(repo):
    return os.path.join(ROOT, "files", repo)


def tree(repo):
    base = repo_dir(repo)
    entries = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, base)
        if rel_dir != ".":
            entries.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": rel_dir})
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, base)
            sha1, sha256 = file_hashes(full)
            size = os.path.getsize(full)
            entry = {"type": "file", "oid": sha1, "size": size, "path": rel}
            if rel.endswith(LFS_SUFFIXES):
                entry["lfs"] = {"oid": sha256, "size": size, "pointerSize": 134}
            entries.append(entry)
    return entries


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    # ---- plumbing -------------------------------------------------------------------------

    def send(self, code, body=b"", headers=None, content_type="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def hub_error(self, code, error_code, message):
        self.send(code, {"error": message}, {"X-Error-Code": error_code, "X-Error-Message": message})

    def authorized(self):
        token = config().get("token", "")
        return token and self.headers.get("Authorization", "") == "Bearer " + token

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        count("requests")
        path = self.path
        if path.startswith("http://"):  # absolute form: we are being used as a proxy
            count("proxied")
            path = "/" + path.split("/", 3)[3]
        parsed = urllib.parse.urlsplit(path)
        query = urllib.parse.parse_qs(parsed.query)
        parts = [urllib.parse.unquote(p) for p in parsed.path.split("/")[1:]]
        try:
            if self.server.role == "cdn":
                self.cdn(parts, query)
            elif parts[:2] == ["api", "models"]:
                self.api(parts[2:], query, parsed.query)
            elif len(parts) >= 5 and parts[2] == "resolve":
                self.resolve("/".join(parts[:2]), parts[3], "/".join(parts[4:]))
            else:
                self.send(404, {"error": "no route"})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        save_stats()

    def find_repo(self, repo, rest):
        """The repo's config, or None after answering (renamed: 307 relative; unknown: 404)."""
        repos = config().get("repos", {})
        if repo not in repos or not os.path.isdir(repo_dir(repo)) and "renamed_to" not in repos[repo]:
            self.hub_error(404, "RepoNotFound", "Repository not found")
            return None
        target = repos[repo].get("renamed_to")
        if target:
            self.send(307, {"error": "moved"}, {"Location": rest.replace(repo, target, 1)})
            return None
        return repos[repo]

    # ---- API ------------------------------------------------------------------------------

    def api(self, parts, query, raw_query):
        if not parts:
            with lock:
                stats["last_search"] = raw_query
            search = query.get("search", [""])[0].lower()
            author = query.get("author", [""])[0]
            limit = int(query.get("limit", ["50"])[0])
            hits = []
            for i, (repo, cfg) in enumerate(sorted(config().get("repos", {}).items())):
                if "renamed_to" in cfg or search not in repo.lower():
                    continue
                if author and repo.split("/")[0] != author:
                    continue
                hits.append({"id": repo, "downloads": 1000 - i, "likes": i, "tags": ["gguf"],
                             "lastModified": "2024-01-01T00:00:00.000Z",
                             "gated": "manual" if cfg.get("gated") else False})
            return self.send(200, hits[:limit])
        repo = "/".join(parts[:2])
        cfg = self.find_repo(repo, self.path)
        if cfg is None:
            return
        rest = parts[2:]
        if not rest or rest[0] == "revision":
            rev = rest[1] if len(rest) > 1 else "main"
            if rev not in ("main", cfg["sha"]):
                return self.hub_error(404, "RevisionNotFound", "Invalid rev id: " + rev)
            files = [e["path"] for e in tree(repo) if e["type"] == "file"]
            return self.send(200, {"id": repo, "sha": cfg["sha"], "private": False,
                                   "gated": "manual" if cfg.get("gated") else False,
                                   "lastModified": "2024-01-01T00:00:00.000Z",
                                   "siblings": [{"rfilename": f} for f in files]})
        if rest[0] == "tree":
            rev = rest[1]
            if rev not in ("main", cfg["sha"]):
                return self.hub_error(404, "RevisionNotFound", "Invalid rev id: " + rev)
            entries = tree(repo) + cfg.get("extra_tree", [])
            page = config().get("page_size", 1000)
            cursor = int(query.get("cursor", ["0"])[0])
            headers = {}
            if cursor + page < len(entries):
                next_url = "http://127.0.0.1:%d/api/models/%s/tree/%s?recursive=true&cursor=%d" % (
                    ports["api"], repo, urllib.parse.quote(rev, safe=""), cursor + page)
                headers["Link"] = '<%s>; rel="next"' % next_url
            return self.send(200, entries[cursor:cursor + page], headers)
        self.send(404, {"error": "no route"})

    # ---- files ----------------------------------------------------------------------------

    def resolve(self, repo, rev, hub_path):
        count("resolves")
        cfg = self.find_repo(repo, self.path)
        if cfg is None:
            return
        if cfg.get("gated") and not self.authorized():
            return self.hub_error(401, "GatedRepo",
                                  "Access to model %s is restricted. You must have access to it and be "
                                  "authenticated to access it. Please log in." % repo)
        if rev not in ("main", cfg["sha"]):
            return self.hub_error(404, "RevisionNotFound", "Invalid rev id: " + rev)
        full = os.path.join(repo_dir(repo), hub_path)
        if ".." in hub_path.split("/") or not os.path.isfile(full):
            return self.hub_error(404, "EntryNotFound", "Entry not found")
        sha1, sha256 = file_hashes(full)
        size = os.path.getsize(full)
        headers = {"X-Repo-Commit": cfg["sha"], "ETag": '"%s"' % sha1}
        if not hub_path.endswith(LFS_SUFFIXES):
            return self.content(full, hub_path, headers)
        with lock:
            state["serial"] += 1
            serial = state["serial"]
        location = "http://127.0.0.1:%d/blobs/%s?serial=%d&repo=%s&name=%s" % (
            ports["cdn"], sha256, serial, urllib.parse.quote(repo, safe=""), urllib.parse.quote(hub_path, safe=""))
        headers.update({"Location": location, "X-Linked-Etag": '"%s"' % sha256, "X-Linked-Size": str(size),
                        "ETag": '"%s"' % sha256})
        self.send(302, "", headers, "text/plain")

    def cdn(self, parts, query):
        count("cdn_gets")
        if "Authorization" in self.headers:
            count("cdn_auth")
            return self.send(400, {"error": "Authorization header reached the CDN"})
        serial = int(query.get("serial", ["0"])[0])
        repo = query.get("repo", [""])[0]
        hub_path = query.get("name", [""])[0]
        with lock:
            used = serial in state["serials_used"]
            state["serials_used"].add(serial)
        if used:
            fault = take_fault("expire", hub_path)
            if fault:
                return self.send(fault.get("code", 403), "<Error>Request has expired</Error>", {}, "application/xml")
        full = os.path.join(repo_dir(repo), hub_path)
        if len(parts) != 2 or parts[0] != "blobs" or not os.path.isfile(full) or file_hashes(full)[1] != parts[1]:
            return self.send(404, "<Error>NoSuchKey</Error>", {}, "application/xml")
        self.content(full, hub_path, {"ETag": '"%s"' % parts[1]})

    def content(self, full, hub_path, headers):
        status_fault = take_fault("status", hub_path)
        if status_fault:
            return self.send(status_fault.get("code", 503), {"error": "injected"})
        size = os.path.getsize(full)
        start = 0
        range_header = self.headers.get("Range", "")
        if range_header:
            count("range_requests")
        end = size  # one past the last byte sent
        if range_header and not take_fault("norange", hub_path):
            first, dash, last = range_header[6:].partition("-")
            if not range_header.startswith("bytes=") or not dash or not first.isdigit() or (last and not last.isdigit()):
                return self.send(400, {"error": "one range, bytes=START- or bytes=START-END"})
            start = int(first)
            if start >= size:
                return self.send(416, "", {"Content-Range": "bytes */%d" % size}, "text/plain")
            if last:
                end = min(int(last) + 1, size)
            headers["Content-Range"] = "bytes %d-%d/%d" % (start, end - 1, size)
            self.send_response(206)
        else:
            self.send_response(200)
        headers["Accept-Ranges"] = "bytes"
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(end - start))
        self.end_headers()
        if self.command == "HEAD":
            return
        self.body(full, hub_path, start, end)

    def body(self, full, hub_path, start, size):
        drop = take_fault("drop", hub_path)
        stall = None if drop else take_fault("stall", hub_path)
        wrong = take_fault("wrong", hub_path)
        throttle = take_fault("throttle", hub_path)
        cut = drop or stall
        end = size
        if cut:
            end = start + int((size - start) * cut.get("at", 0.5))
        with open(full, "rb") as f:
            if not (cut or wrong or throttle):
                self.wfile.flush()
                sent = self.connection.sendfile(f, start, size - start)
                count("bytes_sent", sent)
                return
            pos = start
            rate = throttle.get("bytes_per_second", 1 << 20) if throttle else 0
            step = min(CHUNK, max(rate // 20, 4096)) if rate else CHUNK
            f.seek(start)
            while pos < end:
                block = bytearray(f.read(min(step, end - pos)))
                if wrong and pos <= size // 2 < pos + len(block):
                    block[size // 2 - pos] ^= 0xFF
                self.wfile.write(block)
                count("bytes_sent", len(block))
                pos += len(block)
                if rate:
                    time.sleep(len(block) / rate)
        if cut:
            self.wfile.flush()
            if stall:
                time.sleep(stall.get("seconds", 5))
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # clients killed mid-request are the point
            super().handle_error(request, client_address)


def serve(role):
    server = Server(("127.0.0.1", 0), Handler)
    server.role = role
    ports[role] = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()


if __name__ == "__main__":
    serve("api")
    serve("cdn")
    save_stats()
    print("PORTS %d %d" % (ports["api"], ports["cdn"]), flush=True)
    threading.Event().wait()
