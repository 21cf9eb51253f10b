package main

import "github.com/urfave/cli/v2"

// commands lists the subcommands; each lives in its own file.
func commands() []*cli.Command {
	return []*cli.Command{
		dumpCommand(),
		convertCommand(),
		injectCommand(),
		showCommand(),
		stripCommand(),
		programsCommand(), snapshotCommand(),
	}
}
