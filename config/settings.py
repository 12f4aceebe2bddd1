"""Settings for the tool hub, read once from the environment.

With no variable set the project runs on the embedded default: SQLite in the checkout,
Celery tasks in-process, DEBUG on. Production sets DATABASE_URL, REDIS_URL, a real
DJANGO_SECRET_KEY and DJANGO_DEBUG=0; `.env.example` lists every variable.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any, Literal

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from dotenv import load_dotenv

BASE_DIR = Path(__file__).resolve().parent.parent
# Where the embedded database, uploads, collected static files and `.env` live: the
# checkout itself when run from one (it has manage.py), else — installed as a package
# (`pip install`, `uvx tool-hub`) — the user's data directory (~/.local/share/tool-hub on
# Linux, ~/Library/Application Support/tool-hub on macOS, %LOCALAPPDATA%\tool-hub on
# Windows), or the directory TOOL_HUB_DATA_DIR names.
CHECKOUT = (BASE_DIR / "manage.py").is_file()
if os.environ.get("TOOL_HUB_DATA_DIR", "").strip():
    DATA_DIR = Path(os.environ["TOOL_HUB_DATA_DIR"].strip()).expanduser()
elif CHECKOUT:
    DATA_DIR = BASE_DIR
else:
    from platformdirs import user_data_path

    DATA_DIR = user_data_path("tool-hub", appauthor=False)
DATA_DIR.mkdir(parents=True, exist_ok=True)
# `.env` of the data directory (or the file TOOL_HUB_ENV_FILE names) fills in the variables
# the environment leaves unset: a desktop client's MCP server, `make run` and the workers
# all read the same settings. The environment wins over the file.
ENV_FILE = Path(os.environ.get("TOOL_HUB_ENV_FILE") or DATA_DIR / ".env")
load_dotenv(ENV_FILE, override=False)


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool) -> bool:
    raw = env_str(name)
    if not raw:
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = env_str(name)
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = env_str(name)
    if not raw:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


# --- Core -------------------------------------------------------------------------------

DEV_SECRET_KEY = "django-insecure-dev-key-for-local-use-only"  # noqa: S105 (refused below when DEBUG is off)
SECRET_KEY = env_str("DJANGO_SECRET_KEY") or DEV_SECRET_KEY
DEBUG = env_bool("DJANGO_DEBUG", default=True)
if not DEBUG and SECRET_KEY == DEV_SECRET_KEY:
    raise ImproperlyConfigured(
        "DJANGO_DEBUG is off but DJANGO_SECRET_KEY is unset (the development key is in use): "
        "set DJANGO_SECRET_KEY to a long random value."
    )

ALLOWED_HOSTS = env_list(
    "DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"] if DEBUG else []
)
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])
# Where people and programs reach the web server: links in tool answers and API replies
# are made absolute with it (a stdio client has no host to resolve a path against).
SITE_URL = env_str("SITE_URL") or "http://127.0.0.1:8000"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from the project (no CDN)
    "config.apps.ProjectConfig",
    "problems.apps.ProblemsConfig",
    "anki_bridge.apps.AnkiBridgeConfig",
    "ojclient.apps.OjclientConfig",
    "normagpt.apps.NormagptConfig",
]

MIDDLEWARE = [
    "core.api.api_limits_middleware",  # first: it also reshapes errors of those below
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
# The part of ROOT_URLCONF the services' links point into: an answer's link is reversed there
# (`core.links.link_path`) without loading the admin, DRF and the API docs. A deployment with
# its own ROOT_URLCONF mounts these patterns as they are, or sets this to None (links are
# then reversed in ROOT_URLCONF).
LINKS_URLCONF: str | None = "config.urls_pages"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # The checkout's templates/; an installed package carries them as config/site_templates.
        "DIRS": [BASE_DIR / "templates" if CHECKOUT else BASE_DIR / "config" / "site_templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------

DATABASE_URL = env_str("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'db.sqlite3'}"
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL,
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A connection per thread that lives as long as the thread: a tool call does not pay
    # for a reconnect (and its WAL checkpoint) every time.
    if not env_str("DATABASE_CONN_MAX_AGE"):
        DATABASES["default"]["CONN_MAX_AGE"] = None
    # Tools run on worker threads and Celery tasks in-process: wait for the write lock
    # instead of failing with "database is locked", and let readers run beside a writer.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool(
    "DATABASE_POOL", default=True
):
    # A psycopg connection pool per process: MCP tools, ASGI requests and Celery tasks
    # borrow a connection instead of opening one per call (persistent connections are
    # not safe under ASGI; the pool is). Requires DATABASE_CONN_MAX_AGE=0.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Django's backend, whose pool says at once why it cannot connect (core/postgresql)
    DATABASES["default"]["ENGINE"] = "core.postgresql"
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": env_int("DATABASE_POOL_MIN", 1),
        "max_size": env_int("DATABASE_POOL_MAX", 10),
        "timeout": env_int("DATABASE_POOL_TIMEOUT", 30),  # seconds a call waits for a connection
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis, cache, Celery ---------------------------------------------------------------

REDIS_URL = env_str("REDIS_URL")

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "toolhub",
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 15 * 60)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 20 * 60)
# Without a broker tasks run in this process (`core.background` decides from this alone):
# work a service starts goes to a pool of BACKGROUND_MAX_WORKERS threads.
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
BACKGROUND_MAX_WORKERS = env_int("BACKGROUND_MAX_WORKERS", 4)
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or "cache+memory://"
# Redis re-delivers a task not acknowledged within the visibility timeout: it must outlast
# the longest task (the hard limit), or a slow task would run twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT + 300}
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = CELERY_BROKER_TRANSPORT_OPTIONS

# --- Auth, i18n, static -----------------------------------------------------------------

LOGIN_URL = "normagpt:login"
LOGIN_REDIRECT_URL = "normagpt:index"  # signing in without `next` lands on the runs page

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The users' language by default; a browser that asks for English (Accept-Language, or
# the language cookie) gets English pages. Translations live in each app's `locale/`.
LANGUAGE_CODE = env_str("LANGUAGE_CODE") or "ru"
LANGUAGES = [("ru", "Русский"), ("en", "English")]
LOCALE_PATHS = [BASE_DIR / "config" / "locale"]  # the project's own pages (the apps: theirs)
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT") or DATA_DIR / "staticfiles")
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "core.static.StaticStorage"  # hashed when collected, plain names if not
        )
    },
}
WHITENOISE_USE_FINDERS = True  # files not collected are served from their apps
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("DJANGO_MEDIA_ROOT") or DATA_DIR / "media")
# Every file the project writes (uploaded norm PDFs, page images) goes through Django's
# storage API: MEDIA_ROOT on this machine by default, S3-compatible object storage when
# STORAGE_S3_BUCKET is set — then every web process and worker, on any host, reads the
# same files. They are served through the project's views (streamed from the storage),
# so a private bucket works and the pages' access rules hold.
STORAGE_S3_BUCKET = env_str("STORAGE_S3_BUCKET")
if STORAGE_S3_BUCKET:
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": STORAGE_S3_BUCKET,
            "endpoint_url": env_str("STORAGE_S3_ENDPOINT_URL") or None,
            "region_name": env_str("STORAGE_S3_REGION") or None,
            "access_key": env_str("STORAGE_S3_ACCESS_KEY") or None,
            "secret_key": env_str("STORAGE_S3_SECRET_KEY") or None,
            "location": env_str("STORAGE_S3_PREFIX"),
            "file_overwrite": False,
            "default_acl": None,
            "querystring_auth": True,
        },
    }

# --- Security (production) --------------------------------------------------------------

SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", default=not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", default=not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Who may speak for the client. Unset/0: nobody, the peer is the client. A comma list of
# proxy addresses or CIDRs: a request from one of them names its client in X-Forwarded-For
# (walked from the right past listed proxies; API throttles key on it) and its scheme in
# X-Forwarded-Proto. 1: one proxy of any address in front; only when it is the sole way in.
_behind_proxy = env_str("DJANGO_BEHIND_PROXY").lower()
TRUSTED_PROXIES: list[str] = []
if _behind_proxy in {"1", "true", "yes", "on"}:
    TRUSTED_PROXIES = ["*"]
elif _behind_proxy not in {"", "0", "false", "no", "off"}:
    TRUSTED_PROXIES = env_list("DJANGO_BEHIND_PROXY", [])
    for _proxy in TRUSTED_PROXIES:
        try:
            ipaddress.ip_network(_proxy, strict=False)
        except ValueError:
            raise ImproperlyConfigured(
                f"DJANGO_BEHIND_PROXY must be 0, 1 or a comma list of addresses/CIDRs; "
                f"{_proxy!r} is neither"
            ) from None
if TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Request limits: the body (uploaded files aside) and the query string. Past them the API
# answers 413 and 414 in its error shape.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DJANGO_MAX_BODY_BYTES", 2_621_440)
MAX_QUERY_STRING_BYTES = env_int("DJANGO_MAX_QUERY_STRING_BYTES", 8192)
# /healthz answers load balancers over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# --- REST API ---------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    # JSON only, refused with a 4xx past the depth, size and value rules.
    "DEFAULT_PARSER_CLASSES": ["core.parsers.JSONParser"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # Keyed on the peer, or the client a trusted proxy names (TRUSTED_PROXIES).
    "DEFAULT_THROTTLE_CLASSES": [
        "core.throttling.AnonRateThrottle",
        "core.throttling.UserRateThrottle",
        "core.throttling.UpstreamAnonRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("API_THROTTLE_ANON", "120/minute"),
        "user": env_str("API_THROTTLE_USER", "1200/minute"),
        # Anonymous requests that make the server fetch from СДАМ ГИА or the OJ API.
        "upstream_anon": env_str("API_THROTTLE_UPSTREAM_ANON", "30/minute"),
    },
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.exception_handler",
    "VIEW_NAME_FUNCTION": "config.api.view_name",  # titles in the page's language
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Tool hub API",
    "DESCRIPTION": (
        "REST access to the СДАМ ГИА problem bank, Anki flashcards, the online-judge client "
        "and the NormaGPT norms agent. Errors share one shape: {code, message, extra}."
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # 3.1: JSON Schema proper, so the pydantic output models document as they are.
    "OAS_VERSION": "3.1.0",
    # /api/docs/ works offline: Swagger UI from the sidecar package, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- MCP --------------------------------------------------------------------------------

# Modules whose `registry` contributes tools, in the order the server lists them.
MCP_TOOL_MODULES = [
    "problems.mcp_tools",
    "anki_bridge.mcp_tools",
    "ojclient.mcp_tools",
    "normagpt.mcp_tools",
]
MCP_HTTP_TOKEN = env_str("MCP_HTTP_TOKEN")
# Whom an MCP client acts as (its runs are its own; core.identity). Over HTTP a user's API
# token acts as its user; the shared MCP_HTTP_TOKEN (and no token, on a loopback server
# without one) as MCP_HTTP_TOKEN_USER; over stdio, MCP_STDIO_USER. A user named here that
# does not exist is made on first use: not staff, no usable password.
MCP_HTTP_TOKEN_USER = env_str("MCP_HTTP_TOKEN_USER") or "mcp"
# `resources/list`: at most this many (recent problems and documents, the caller's runs).
MCP_RESOURCES_LISTED = env_int("MCP_RESOURCES_LISTED", 50)
MCP_STDIO_USER = env_str("MCP_STDIO_USER") or "local"
MCP_HTTP_HOST = env_str("MCP_HTTP_HOST", "127.0.0.1")
# 8765 belongs to AnkiConnect, 8000 to `make run`.
MCP_HTTP_PORT = env_int("MCP_HTTP_PORT", 8001)
# Streamable HTTP sessions: closed after this many idle seconds; at most this many open.
# When a stdio client closes stdin, the requests it already sent are still answered, for
# at most this long, before the server exits (MCP: closing stdin asks for shutdown).
MCP_STDIO_DRAIN_SECONDS = env_int("MCP_STDIO_DRAIN_SECONDS", 120)
# Stateless streamable HTTP: every request stands alone (no session id), so any process
# behind a balancer can answer it — several web processes on several hosts, no sticky
# sessions. Progress of a long call still streams in that call's own response. Off by
# default: one process keeps sessions (and what needs them) in memory.
MCP_HTTP_STATELESS = env_bool("MCP_HTTP_STATELESS", default=False)
MCP_HTTP_SESSION_IDLE_SECONDS = env_int("MCP_HTTP_SESSION_IDLE_SECONDS", 30 * 60)
MCP_HTTP_MAX_SESSIONS = env_int("MCP_HTTP_MAX_SESSIONS", 10_000)
if MCP_HTTP_SESSION_IDLE_SECONDS < 1:
    raise ImproperlyConfigured("MCP_HTTP_SESSION_IDLE_SECONDS must be at least 1")

# --- problems: the СДАМ ГИА sites ------------------------------------------------------

# {subject} and {exam} are filled in: https://math-ege.sdamgia.ru. Tests point it at 127.0.0.1.
SDAMGIA_URL_TEMPLATE = env_str("SDAMGIA_URL_TEMPLATE", "https://{subject}-{exam}.sdamgia.ru")
SDAMGIA_TIMEOUT = float(env_str("SDAMGIA_TIMEOUT", "10"))
# Seconds for a whole page fetch: every attempt, back-off, redirect and the body.
SDAMGIA_DEADLINE = float(env_str("SDAMGIA_DEADLINE", "30"))
SDAMGIA_MAX_CONCURRENCY_PER_HOST = env_int("SDAMGIA_MAX_CONCURRENCY_PER_HOST", 4)
SDAMGIA_MIN_INTERVAL = float(env_str("SDAMGIA_MIN_INTERVAL", "0.25"))  # seconds between requests
SDAMGIA_RETRIES = env_int("SDAMGIA_RETRIES", 2)
SDAMGIA_MAX_BODY_BYTES = env_int("SDAMGIA_MAX_BODY_BYTES", 5 * 1024 * 1024)
# How long a stored copy is served before it is fetched again (seconds).
SDAMGIA_TTL_PROBLEM = env_int("SDAMGIA_TTL_PROBLEM", 30 * 24 * 3600)
SDAMGIA_TTL_CATALOG = env_int("SDAMGIA_TTL_CATALOG", 7 * 24 * 3600)
SDAMGIA_TTL_CATEGORY = env_int("SDAMGIA_TTL_CATEGORY", 7 * 24 * 3600)
# A crawl worker's hold on a category: renewed after every listing page; when a worker
# dies, another takes the category over once this has passed, from the next page.
SDAMGIA_CRAWL_LEASE = float(env_str("SDAMGIA_CRAWL_LEASE", "120"))
# How many loops a distributed crawl starts (one per worker process that should share it).
SDAMGIA_CRAWL_WORKERS = env_int("SDAMGIA_CRAWL_WORKERS", 4)
SDAMGIA_TTL_TEST = env_int("SDAMGIA_TTL_TEST", 30 * 24 * 3600)
# How long the link to a printed sheet (it holds the answer key) stays valid (at least 1).
SDAMGIA_SHEET_LINK_HOURS = max(1, env_int("SDAMGIA_SHEET_LINK_HOURS", 24))
# Days a printed sheet's file is kept after it was last printed: the beat task
# problems.sheets_expire (daily) deletes older ones (0: kept for ever). Never less than a
# link's lifetime.
SDAMGIA_SHEET_TTL_DAYS = max(0, env_int("SDAMGIA_SHEET_TTL_DAYS", 7))
# sdamgia_variant_pdf over MCP: a sheet up to this many bytes comes in the answer itself (an
# embedded application/pdf resource); a larger one as a link to the resource
# sdamgia://variant/{id}/pdf, which the client reads (0: always the link).
SDAMGIA_PDF_EMBED_MAX = max(0, env_int("SDAMGIA_PDF_EMBED_MAX", 768 * 1024))
# sdamgia_search_by_image: a photo by URL (every address checked, as anki's images: private
# ones refused unless allowed), its byte cap (base64 or fetched), and the OCR that reads it.
SDAMGIA_IMAGE_MAX_BYTES = env_int("SDAMGIA_IMAGE_MAX_BYTES", 15 * 1024 * 1024)
SDAMGIA_IMAGE_TIMEOUT = float(env_str("SDAMGIA_IMAGE_TIMEOUT", "20"))
SDAMGIA_IMAGE_ALLOW_PRIVATE = env_bool("SDAMGIA_IMAGE_ALLOW_PRIVATE", default=False)
SDAMGIA_TESSERACT_CMD = env_str("SDAMGIA_TESSERACT_CMD", "tesseract")
SDAMGIA_OCR_LANGS = env_str("SDAMGIA_OCR_LANGS", "rus+eng")
SDAMGIA_OCR_TIMEOUT = float(env_str("SDAMGIA_OCR_TIMEOUT", "30"))

# --- anki_bridge: AnkiConnect and the external search ----------------------------------

ANKI_CONNECT_URL = env_str("ANKI_CONNECT_URL", "http://127.0.0.1:8765")
ANKI_CONNECT_KEY = env_str("ANKI_CONNECT_KEY")
# Empty means the default (seed 002).
ANKI_DEFAULT_DECK = env_str("ANKI_DEFAULT_DECK") or "Default"
ANKI_DEFAULT_MODEL = env_str("ANKI_DEFAULT_MODEL") or "Поля для ChatGPT"
SEARCH_API_URL = env_str("SEARCH_API_URL")
SEARCH_API_KEY = env_str("SEARCH_API_KEY")
# image_url fetching: non-public hosts are refused; ANKI_IMAGE_ALLOW_PRIVATE admits
# loopback only (images served on this machine), never private or metadata addresses.
ANKI_IMAGE_ALLOW_PRIVATE = env_bool("ANKI_IMAGE_ALLOW_PRIVATE", default=False)
ANKI_IMAGE_MAX_BYTES = env_int("ANKI_IMAGE_MAX_BYTES", 10 * 1024 * 1024)
ANKI_IMAGE_TIMEOUT = float(env_str("ANKI_IMAGE_TIMEOUT", "15"))
# Seconds to wait for one AnkiConnect answer (Anki runs actions on its main thread).
ANKI_CONNECT_TIMEOUT = float(env_str("ANKI_CONNECT_TIMEOUT", "30"))
# The journal's delivery of queued notes: how long a sender's hold on a note lasts unless
# renewed (seconds; renewed every third of it while it works, released when it ends, taken
# over at once from a dead process of the same host), and the flush task's retries while
# Anki stays unreachable.
ANKI_JOURNAL_LEASE = env_int("ANKI_JOURNAL_LEASE", 30)
ANKI_FLUSH_MAX_RETRIES = env_int("ANKI_FLUSH_MAX_RETRIES", 10)
ANKI_FLUSH_BACKOFF = env_int("ANKI_FLUSH_BACKOFF", 15)  # first delay; doubles up to the max
ANKI_FLUSH_BACKOFF_MAX = env_int("ANKI_FLUSH_BACKOFF_MAX", 900)
# Any Anki call checks, at most once per this many seconds per process, whether a dead
# sender left journal rows, and has them delivered in the background.
ANKI_TAKEOVER_CHECK_SECONDS = env_int("ANKI_TAKEOVER_CHECK_SECONDS", 30)
# A review session (anki.review_start) expires after this many hours without a call.
ANKI_REVIEW_SESSION_HOURS = env_int("ANKI_REVIEW_SESSION_HOURS", 12)
# The pictures of a reviewed card's side go to the model as MCP images (anki.review_next,
# anki.review_reveal): at most ANKI_REVIEW_IMAGES a side, each re-encoded as JPEG with its
# long side within ANKI_REVIEW_IMAGE_MAX_PX and its size within ANKI_REVIEW_IMAGE_MAX_BYTES.
ANKI_REVIEW_IMAGES = env_int("ANKI_REVIEW_IMAGES", 4)
ANKI_REVIEW_IMAGE_MAX_PX = env_int("ANKI_REVIEW_IMAGE_MAX_PX", 1024)
ANKI_REVIEW_IMAGE_MAX_BYTES = env_int("ANKI_REVIEW_IMAGE_MAX_BYTES", 300_000)
# Anki packages (anki.export_package, issue 53): one is returned over MCP embedded (an
# application/apkg resource) up to ANKI_PACKAGE_EMBED_MAX bytes, else as a link to the
# resource anki://package/{id} (0: always the link); refused past ANKI_PACKAGE_MAX_BYTES;
# kept ANKI_PACKAGE_TTL_HOURS, at most ANKI_PACKAGE_MAX_PER_USER per user (the oldest go).
ANKI_PACKAGE_EMBED_MAX = max(0, env_int("ANKI_PACKAGE_EMBED_MAX", 4 * 1024 * 1024))
ANKI_PACKAGE_MAX_BYTES = env_int("ANKI_PACKAGE_MAX_BYTES", 200 * 1024 * 1024)
ANKI_PACKAGE_TTL_HOURS = env_int("ANKI_PACKAGE_TTL_HOURS", 7 * 24)
ANKI_PACKAGE_MAX_PER_USER = env_int("ANKI_PACKAGE_MAX_PER_USER", 20)
# Without a broker, queued notes are delivered by a thread of the process that queued
# them, which asks Anki every this many seconds whether it is back.
ANKI_WAIT_POLL = float(env_str("ANKI_WAIT_POLL", "2"))
# How images reach Anki: "auto" (Anki reads them from ANKI_MEDIA_SHARED_DIR when it runs
# on this machine, else they travel in the requests), "path" or "data".
ANKI_MEDIA_UPLOAD = env_str("ANKI_MEDIA_UPLOAD", "auto")
if ANKI_MEDIA_UPLOAD not in ("auto", "path", "data"):
    raise ImproperlyConfigured("ANKI_MEDIA_UPLOAD must be auto, path or data")
# A folder Anki can read (empty: anki-bridge in the system's temporary folder).
ANKI_MEDIA_SHARED_DIR = env_str("ANKI_MEDIA_SHARED_DIR")
# Seconds for one call of the external search.
SEARCH_API_TIMEOUT = float(env_str("SEARCH_API_TIMEOUT", "30"))

# --- ojclient: the online-judge problem API ---------------------------------------------

# An http(s) origin (no path); validated and normalized by ojclient. Unset: tools say so.
OJ_API_BASE_URL = env_str("OJ_API_BASE_URL")
# Sent as `Authorization: Bearer …`; never logged. `get_platform_status` needs it.
OJ_API_TOKEN = env_str("OJ_API_TOKEN")
# Total time for one request, seconds (connect, redirects and body); no retries.
OJ_API_TIMEOUT = float(env_str("OJ_API_TIMEOUT", "30"))
# Larger responses are refused rather than read.
OJ_API_MAX_BODY_BYTES = env_int("OJ_API_MAX_BODY_BYTES", 1024 * 1024)

# --- normagpt: the norms agent -----------------------------------------------------------

OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
NORMAGPT_MODEL = env_str("NORMAGPT_MODEL", "gpt-4o-mini")
NORMAGPT_VISION = env_bool("NORMAGPT_VISION", default=False)
# Seconds per LLM request, retries on 429/5xx/timeouts (with exponential backoff from
# NORMAGPT_LLM_BACKOFF seconds), and whether to ask for a JSON object response_format.
NORMAGPT_LLM_TIMEOUT = float(env_str("NORMAGPT_LLM_TIMEOUT", "120"))
NORMAGPT_LLM_RETRIES = env_int("NORMAGPT_LLM_RETRIES", 3)
NORMAGPT_LLM_BACKOFF = float(env_str("NORMAGPT_LLM_BACKOFF", "1.0"))
NORMAGPT_LLM_JSON_MODE = env_bool("NORMAGPT_LLM_JSON_MODE", default=True)
# Seconds one node's model attempts share (the first, the retries, the corrective retry):
# each attempt gets NORMAGPT_LLM_TIMEOUT or what is left, and none starts once it is spent.
NORMAGPT_NODE_BUDGET = float(env_str("NORMAGPT_NODE_BUDGET", "150"))
# Caps of one run: executor steps, replans, LLM calls, tokens, active seconds. Hitting one
# ends the run with what is known, marked incomplete.
NORMAGPT_MAX_STEPS = env_int("NORMAGPT_MAX_STEPS", 6)
NORMAGPT_MAX_REPLANS = env_int("NORMAGPT_MAX_REPLANS", 2)
NORMAGPT_MAX_LLM_CALLS = env_int("NORMAGPT_MAX_LLM_CALLS", 24)
NORMAGPT_MAX_TOKENS = env_int("NORMAGPT_MAX_TOKENS", 200_000)
NORMAGPT_MAX_SECONDS = env_int("NORMAGPT_MAX_SECONDS", 600)
# A run whose advancer stopped renewing its lease (every third of it) this long is taken
# over by another (normagpt.recovery): the time from a crash to the run going on again.
NORMAGPT_RUN_LEASE_SECONDS = env_int("NORMAGPT_RUN_LEASE_SECONDS", 15)
# Runs of one user advanced at once, on all hosts together (0: no limit); the user's next
# runs wait their turn, queued, so one user's burst does not hold every worker.
NORMAGPT_RUNS_PER_USER = max(0, env_int("NORMAGPT_RUNS_PER_USER", 2))
# With a broker, a run no worker has taken this many seconds after it was queued is sent
# again (its message may be lost); a run waiting in a process's own pool is kept alive by
# that process, and one whose process stopped is taken over after a lease.
NORMAGPT_QUEUED_RESEND_SECONDS = max(30, env_int("NORMAGPT_QUEUED_RESEND_SECONDS", 300))
# Seconds a run that asked the asker a question waits for the reply (holding no worker);
# past them it answers with what it has, marked incomplete (at least a minute).
NORMAGPT_INPUT_TIMEOUT = max(60, env_int("NORMAGPT_INPUT_TIMEOUT", 86_400))
# Times one run may ask back; past them the judge's ASK is taken as FINALIZE (with conditions).
NORMAGPT_MAX_ASKS = max(0, env_int("NORMAGPT_MAX_ASKS", 2))
# Tokens of a thread's earlier questions, answers and sources a follow-up is given (the
# newest turns first).
NORMAGPT_THREAD_CONTEXT_TOKENS = max(200, env_int("NORMAGPT_THREAD_CONTEXT_TOKENS", 2_000))
# Pages the executor reads per step, and the search's default result count.
NORMAGPT_PAGES_PER_STEP = env_int("NORMAGPT_PAGES_PER_STEP", 4)
# Rendering of ingested PDF pages (dots per inch) and OCR of pages without a text layer
# (Debian tesseract-ocr + tesseract-ocr-rus; skipped, page flagged, when absent).
NORMAGPT_PAGE_DPI = env_int("NORMAGPT_PAGE_DPI", 110)
NORMAGPT_OCR = env_bool("NORMAGPT_OCR", default=True)
NORMAGPT_TESSERACT_CMD = env_str("NORMAGPT_TESSERACT_CMD", "tesseract")
NORMAGPT_OCR_LANGS = env_str("NORMAGPT_OCR_LANGS", "rus+eng")
# Limits every PDF is checked against when it is opened, before a page is rendered (a
# refusal names the file, the page and the setting): its size in MB, its pages, and each
# page's area in PDF points² (default A0, 2384 × 3370 pt; a page tree claiming a million
# pages or a 14,400 pt page is refused in milliseconds).
NORMAGPT_MAX_FILE_MB = max(1, env_int("NORMAGPT_MAX_FILE_MB", 200))
NORMAGPT_MAX_PAGES = max(1, env_int("NORMAGPT_MAX_PAGES", 3000))
NORMAGPT_MAX_PAGE_AREA = max(1, env_int("NORMAGPT_MAX_PAGE_AREA", 2384 * 3370))
# Pixels of one rendered page image (4 bytes each while it is drawn, ≈ 7 in all with the
# JPEG encoding): a page within the area limit whose image at NORMAGPT_PAGE_DPI would be
# larger is drawn at a lower DPI instead (A0 at 110 DPI is 18.8 Mpx: drawn in full).
NORMAGPT_MAX_RENDER_PIXELS = max(1_000_000, env_int("NORMAGPT_MAX_RENDER_PIXELS", 25_000_000))
# An ingestion renews its lease while pages render; one not renewed this long (its process
# killed), or whose process on this host has ended, is marked failed by the recovery
# sweep, and starting it again goes on from the pages it had rendered.
NORMAGPT_INGEST_LEASE_SECONDS = max(2, env_int("NORMAGPT_INGEST_LEASE_SECONDS", 30))
# Cost estimate of a run, USD per million input / output tokens (gpt-4o-mini prices).
NORMAGPT_PRICE_INPUT_PER_M = float(env_str("NORMAGPT_PRICE_INPUT_PER_M", "0.15"))
NORMAGPT_PRICE_OUTPUT_PER_M = float(env_str("NORMAGPT_PRICE_OUTPUT_PER_M", "0.60"))

# --- Logging: everything to stderr (stdout belongs to the MCP stdio protocol) ----------

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_LEVEL: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
if (_level := env_str("DJANGO_LOG_LEVEL", "INFO").upper()) not in LOG_LEVELS:
    raise ImproperlyConfigured(f"DJANGO_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}")
LOG_LEVEL = _level  # type: ignore[assignment]
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "formatter": "plain",
        },
    },
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"handlers": ["stderr"], "level": LOG_LEVEL, "propagate": False},
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
    },
}
