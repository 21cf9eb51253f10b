package main

import "github.com/urfave/cli/v2"

// commands lists the subcommands, the main job first; each lives in its
// own file.
func commands() []*cli.Command {
	return []*cli.Command{
		injectCommand(),
		showCommand(),
		stripCommand(),
		snapshotCommand(),
		watchCommand(),
		programsCommand(),
		dumpCommand(),
		convertCommand(),
		versionCommand(),
		completionCommand(),
		manCommand(),
	}
}
