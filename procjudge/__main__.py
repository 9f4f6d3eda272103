"""python -m procjudge"""

from .cli import run

run()
