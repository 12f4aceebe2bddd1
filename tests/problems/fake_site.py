"""A local stand-in for the СДАМ ГИА sites, served on 127.0.0.1 for the tests.

Sites live under a path prefix (`/math-ege/problem?id=1`), so one server plays all 30:
tests set SDAMGIA_URL_TEMPLATE to `http://127.0.0.1:PORT/{subject}-{exam}`. Pages come
from registered problem blocks (wrapped like a real /problem page), registered raw pages
per (site, path, query), and a fault switch for the failure tests. Every request is
recorded.

With `search_engine=True`, `/search?search=Q&page=N` behaves as the real site's
(../shared/fixtures/sdamgia/SEARCH.md): it matches words, not characters — a problem is
found when it holds most (`SEARCH_MOST`) of the phrase's words (its whole text: condition,
formulas as the site writes them in their images' alt, solution) —, the problems holding
the most words first, and answers pages of ten whole problem blocks (condition, solution,
answer), the last page repeated forever.
Otherwise search pages are empty unless a test registers one.
"""

from __future__ import annotations

import heapq
import html
import math
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from tests.problems.blocks import search_results

PAGE = """<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8">
<title>СДАМ ГИА</title></head><body><div class="wrapper">
<div class="new_header"><b>РЕШУ ЕГЭ</b></div>{body}</div></body></html>"""
EMPTY_PROBLEM_PAGE = PAGE.format(body="<p>Задание не найдено</p>")
CHALLENGE = (
    "<html><head><title>Just a moment...</title></head>"
    "<body>Checking your browser before accessing. cf-chl captcha</body></html>"
)
EMPTY_SEARCH = PAGE.format(body='<div class="prob_list" data-total="0"></div>')
# What the site shows during works: its own frame, no problem, no "not found".
MAINTENANCE = PAGE.format(
    body="<h1>Сайт на обслуживании</h1><p>Ведутся технические работы. Зайдите позже.</p>"
)
SEARCH_MOST = 0.75  # the share of a phrase's words a problem must hold to be found
SEARCH_PAGE_SIZE = 10
_TAG = re.compile(r"<[^>]+>")
_ALT = re.compile(r'<img[^>]*\balt="([^"]*)"')
_WORD = re.compile(r"\w+")
TRUNCATED_BLOCK = '<div class="prob_maindiv" id="maindiv1"><div class="nobreak"><span class="pr'


@dataclass
class Fault:
    kind: str  # slow | drop | status | challenge | garbage | maintenance | truncated | huge | redirect
    status: int = 503
    delay: float = 0.0
    times: int = 10**9  # how many requests it hits before the site recovers
    path: str = ""  # only requests whose path contains this
    location: str = ""


@dataclass
class Request:
    site: str
    path: str
    params: dict[str, str]
    at: float = field(default_factory=time.time)  # when the request arrived


@dataclass
class FakeSite:
    latency: float = 0.0
    blocks: dict[tuple[str, str], str] = field(default_factory=dict)  # (site, id) → block html
    pages: dict[tuple[str, str, tuple[tuple[str, str], ...]], str] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    generated: int = 0  # tests the constructor made
    max_in_flight: int = 0
    search_engine: bool = False
    search_formulas: bool = True  # False: formula images' text is not searched (harsher)
    # every block's words, read once, and the blocks holding each word: the real site's
    # search costs about the same at any size, so must the stand-in's
    _words: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    _holders: dict[str, set[tuple[str, str]]] = field(default_factory=dict)

    def add_problem(self, site: str, problem_id: str, block_html: str) -> None:
        key = (site, str(problem_id))
        self.blocks[key] = block_html
        self._forget_words(key)  # read again at the next search

    def add_page(self, site: str, path: str, params: dict[str, str | int], html: str) -> None:
        key = tuple(sorted((k, str(v)) for k, v in params.items()))
        self.pages[(site, path, key)] = html

    def generate(self, site: str, params: dict[str, str]) -> str:
        """The site's variant constructor: for each `prbN=count`, the first `count` problems
        of task N (by number); a new test of them, its page served as the site serves one."""
        chosen: list[str] = []
        for key in sorted((k for k in params if k.startswith("prb")), key=lambda k: int(k[3:])):
            number, count = key[3:], int(params[key])
            of_task = sorted(
                (int(pid), html)
                for (s, pid), html in self.blocks.items()
                if s == site and f"Тип {number}\u00a0№" in html
            )
            chosen += [html for _, html in of_task[:count]]
        with self.lock:
            self.generated += 1
            test_id = str(70000 + self.generated)
        page = (
            f'<html><body><div class="new_header"><b>Вариант № {test_id}</b></div>'
            f'<div class="prob_list">{"".join(chosen)}</div></body></html>'
        )
        self.add_page(site, "/test", {"id": test_id, "nt": "True", "pub": "False"}, page)
        return test_id

    def requests_to(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    def respond(self, site: str, path: str, params: dict[str, str]) -> tuple[int, str]:
        key = tuple(sorted(params.items()))
        if (site, path, key) in self.pages:
            return 200, self.pages[(site, path, key)]
        if path == "/problem":
            block = self.blocks.get((site, params.get("id", "")))
            return 200, PAGE.format(body=block) if block else EMPTY_PROBLEM_PAGE
        if path == "/search" and self.search_engine:
            page = int(params["page"]) if params.get("page", "").isdigit() else 1
            return 200, self.search(site, params.get("search", ""), page)
        if path in ("/search", "/test"):
            return 200, EMPTY_SEARCH
        return 404, "<h1>404</h1>"

    def search(self, site: str, phrase: str, page: int) -> str:
        """The site's search: problems holding most of the phrase's words, ten whole blocks
        a page, the most words matched first; a page past the last repeats the last."""
        wanted = set(search_words(phrase))
        if not wanted:
            return EMPTY_SEARCH
        need = math.ceil(SEARCH_MOST * len(wanted))
        with self.lock:  # searches run on the server's threads
            self._read_words()
        # a block holding `need` of the words holds one of the len − need + 1 rarest
        rarest = sorted(wanted, key=lambda word: len(self._holders.get(word, ())))
        keys = set().union(*(self._holders.get(w, ()) for w in rarest[: len(wanted) - need + 1]))
        found = [
            (-held, int(key[1]) if key[1].isdigit() else 0, key)
            for key in keys
            if key[0] == site and (held := len(wanted & self._words[key])) >= need
        ]
        if not found:
            return EMPTY_SEARCH
        last = (len(found) - 1) // SEARCH_PAGE_SIZE + 1
        start = (min(max(page, 1), last) - 1) * SEARCH_PAGE_SIZE
        first = heapq.nsmallest(start + SEARCH_PAGE_SIZE, found)  # the page, not a full sort
        shown = [self.blocks[key] for _, _, key in first[start:]]
        return PAGE.format(body=search_results(shown))

    def _read_words(self) -> None:
        """The words of every block not read yet; those of blocks gone are dropped."""
        if self.blocks.keys() == self._words.keys():
            return
        for key in self._words.keys() - self.blocks.keys():
            self._forget_words(key)
        for key in self.blocks.keys() - self._words.keys():
            text = block_text(self.blocks[key], formulas=self.search_formulas)
            words = frozenset(search_words(text))
            self._words[key] = words
            for word in words:
                self._holders.setdefault(word, set()).add(key)

    def _forget_words(self, key: tuple[str, str]) -> None:
        for word in self._words.pop(key, ()):
            self._holders[word].discard(key)

    def take_fault(self, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and fault.path in path:
                    fault.times -= 1
                    return fault
        return None


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        fake = self.server.fake
        parts = urlsplit(self.path)
        site, _, rest = parts.path.lstrip("/").partition("/")
        path = "/" + rest
        params = dict(parse_qsl(parts.query))
        with fake.lock:
            fake.requests.append(Request(site, path, params))
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            if fake.latency:
                time.sleep(fake.latency)
            fault = fake.take_fault(path)
            if fault is not None and self._fault(fault):
                return
            if path == "/test" and params.get("a") == "generate":
                test_id = fake.generate(site, params)
                self.send_response(302)  # as the site: to the new test's page
                self.send_header("Location", f"/{site}/test?id={test_id}&nt=True&pub=False")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status, body = fake.respond(site, path, params)
            self._send(status, body.encode())
        finally:
            with fake.lock:
                fake.in_flight -= 1

    def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _fault(self, fault: Fault) -> bool:
        """Act out a fault; False when the request should then be answered normally."""
        if fault.kind == "slow":
            time.sleep(fault.delay)
            return False
        if fault.kind == "drop":
            self.connection.shutdown(socket.SHUT_RDWR)
            return True
        if fault.kind == "status":
            self._send(fault.status, f"<h1>{fault.status}</h1>".encode(), {"Retry-After": "0"})
        elif fault.kind == "challenge":
            self._send(200, CHALLENGE.encode())
        elif fault.kind == "garbage":
            self._send(200, b"\x00\xff<<<>>> not html at all <div class=")
        elif fault.kind == "maintenance":
            self._send(200, MAINTENANCE.encode())
        elif fault.kind == "truncated":
            self._send(200, PAGE.format(body=TRUNCATED_BLOCK).encode())
        elif fault.kind == "huge":
            self._huge()
        elif fault.kind == "redirect":
            self.send_response(302)
            self.send_header("Location", fault.location)
            self.send_header("Content-Length", "0")
            self.end_headers()
        return True

    def _huge(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()  # no Content-Length: the body streams until the client stops
        chunk = b"<p>" + b"x" * 65536 + b"</p>"
        try:
            for _ in range(20 * 1024 * 1024 // len(chunk) + 1):
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops concurrent connects (1 s SYN retry)
    fake: FakeSite


def block_text(block: str, *, formulas: bool = True) -> str:
    """What the site's search indexes of a problem: its text, formulas included (the site
    keeps a formula as text; its image's alt is that text) unless `formulas=False`."""
    return html.unescape(_TAG.sub(" ", _ALT.sub(r" \1 ", block) if formulas else block))


def search_words(text: str) -> list[str]:
    """The words the site's search compares: lower case, ё as е, two characters or more."""
    return [w for w in _WORD.findall(text.lower().replace("ё", "е")) if len(w) >= 2]


def serve(fake: FakeSite) -> tuple[_Server, str]:
    """Start the server on a free loopback port; returns it and its URL template."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = fake
    # a short poll: shutdown() waits up to one poll interval (the default 0.5 s per test)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    port = server.server_address[1]
    return server, f"http://127.0.0.1:{port}/{{subject}}-{{exam}}"
