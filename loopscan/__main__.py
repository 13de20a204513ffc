from loopscan.cli.app import main

main()
