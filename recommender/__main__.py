"""`python -m recommender`: the command line (`cli.main`). Ctrl-C while its modules are still loading ends it
as quietly as Ctrl-C later does."""
import sys

try:
    from recommender.cli import main
except KeyboardInterrupt:
    print("interrupted before anything started", file=sys.stderr)
    sys.exit(130)
sys.exit(main())
