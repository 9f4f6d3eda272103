"""python -m procjudge"""

from .cli import main

raise SystemExit(main())
