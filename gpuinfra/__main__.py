from gpuinfra.cli import main

raise SystemExit(main())
