"""Production: everything secret or host-specific from the environment, debug off."""

import os

from config.settings.base import *  # noqa: F403
from config.settings.base import env_bool, env_list

DEBUG = False
SECRET_KEY = os.environ.get("SECRET_KEY", "")
"""At least 50 random characters; ``check --deploy`` (run by ``make serve``) refuses others."""
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
SITE_URL = os.environ.get("SITE_URL", f"https://{ALLOWED_HOSTS[0].lstrip('.')}" if ALLOWED_HOSTS else "").rstrip("/")
"""Links in e-mails sent by workers: the public address (by default https:// and the first allowed host).
E-mail goes by SMTP once ``EMAIL_HOST`` is set (see base.py and the README); until then, to the log."""

SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

INSECURE_HTTP_FOR_LOCAL_BENCHMARK = env_bool("INSECURE_HTTP_FOR_LOCAL_BENCHMARK", False)
"""Off by default; only for ``benchmarks/load_rush.py``. Production settings over plain HTTP on
loopback: no redirect to HTTPS, no HSTS, session and CSRF cookies sent over http. A system
check (leaderboard.E003) refuses it unless every allowed host is a loopback name, so it cannot
serve a real site."""
if INSECURE_HTTP_FOR_LOCAL_BENCHMARK:
    SECURE_SSL_REDIRECT = False
    SECURE_HSTS_SECONDS = 0
    SESSION_COOKIE_SECURE = False
    CSRF_COOKIE_SECURE = False
