import sys

from recommender.cli import main

sys.exit(main())
