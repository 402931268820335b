from whiteboard.cli import main

raise SystemExit(main())
