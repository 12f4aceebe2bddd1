"""A password hasher for the suite: Django's PBKDF2 with one iteration.

Its hashes keep Django's own format (`pbkdf2_sha256$1$salt$hash`, the iterations inside),
so a server or worker the suite spawns, with Django's default hashers, still checks them;
each test that makes or checks a password saves the 0.2-0.4 s of CPU a million iterations
cost. Production settings are untouched.
"""

from __future__ import annotations

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class OneIterationPBKDF2(PBKDF2PasswordHasher):
    iterations = 1
