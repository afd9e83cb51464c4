import sys

from codegen.main import main

sys.exit(main())
